package io.sr3.flink.it;

import io.sr3.flink.WorkingState;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.testjob.TestJobSpec.FailureMode;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;


import static io.sr3.flink.it.Sr3ITCaseSupport.assertExactResults;
import static io.sr3.flink.it.Sr3ITCaseSupport.assertSucceeded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once results through Flink failovers with checkpoints on the sr3 ring, for both
 * working-state modes: a task failure, and the loss of a TaskManager.
 */
class Sr3FailoverITCase extends Sr3ClusterTestBase {


    /** (a) A task throws once after a completed checkpoint; the job restores from the ring. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void exactResultAfterTaskFailure(WorkingState workingState) throws Exception {
        start("task-failure", workingState, 3);
        // 4 s of input, like (b): the default 2 s can end before RocksDB's first checkpoint completes (seen on
        // Flink 1.20, where the job then finishes without the failure).
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500).withFailure(FailureMode.AFTER_CHECKPOINT, 300);

        JobID job = cluster.submit(spec, 2, cluster.jobConfiguration(c -> {}));
        JobResult result = cluster.awaitResult(job);

        RunRegistry.Run run = RunRegistry.run(runId);
        assertSucceeded(result, run);
        assertThat(run.failureInjected()).as("failure injected in %s", run).isTrue();
        assertThat(run.restoredStarts()).as("instances restored from a checkpoint in %s", run).isPositive();
        assertExactResults(spec);
    }

    /** (b) A TaskManager running a task stops after a completed checkpoint; spare slots take over. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void exactResultAfterTaskManagerLoss(WorkingState workingState) throws Exception {
        start("tm-loss", workingState, 3);
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500);
        RunRegistry.Run run = RunRegistry.run(runId);

        // Parallelism 3 over 3 TaskManagers with slots spread out: every TaskManager runs a subtask.
        JobID job = cluster.submit(spec, 3, cluster.jobConfiguration(c -> {}));
        cluster.awaitWhileJobRuns(job, "a completed checkpoint", () -> run.completedCheckpointNotifications() > 0);
        assertThat(run.totalEmissions()).as("results before the TaskManager loss").isZero();
        cluster.miniCluster().terminateTaskManager(0).get();
        JobResult result = cluster.awaitResult(job);

        assertSucceeded(result, run);
        assertThat(run.restoredStarts()).as("instances restored after the TaskManager loss in %s", run).isPositive();
        assertExactResults(spec);
    }
}
