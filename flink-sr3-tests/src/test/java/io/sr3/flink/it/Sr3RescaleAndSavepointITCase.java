package io.sr3.flink.it;

import io.sr3.flink.WorkingState;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;

import static io.sr3.flink.it.Sr3ITCaseSupport.assertExactResults;
import static io.sr3.flink.it.Sr3ITCaseSupport.assertSucceeded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run stopped part-way and resubmitted as a new job: from a retained sr3:// checkpoint at
 * another parallelism, and from a stop-with-savepoint into a file:// directory.
 */
class Sr3RescaleAndSavepointITCase extends Sr3ClusterTestBase {


    /** (d) Retained checkpoint taken at parallelism 2, job cancelled, resumed at parallelism 3. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void resumesFromRetainedCheckpointAtAnotherParallelism(WorkingState workingState) throws Exception {
        start("rescale", workingState, 3);
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500);
        RunRegistry.Run run = RunRegistry.run(runId);

        JobID first = cluster.submit(spec, 2, cluster.jobConfiguration(c -> c.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION)));
        cluster.awaitWhileJobRuns(first, "a completed checkpoint", () -> run.completedCheckpointNotifications() > 0);
        String checkpoint = cluster.triggerCheckpoint(first);
        cluster.miniCluster().cancelJob(first).get(Sr3TestCluster.JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(cluster.awaitResult(first).getJobStatus()).hasValue(JobStatus.CANCELED);
        assertThat(checkpoint).startsWith("sr3:");
        assertThat(run.totalEmissions()).as("results of the cancelled job").isZero();
        assertThat(run.restoredStarts()).isZero();

        JobID second = cluster.submit(spec, 3, cluster.jobConfiguration(c -> c.set(StateRecoveryOptions.SAVEPOINT_PATH, checkpoint)));
        JobResult result = cluster.awaitResult(second);

        assertSucceeded(result, run);
        assertThat(run.restoredStarts()).as("instances restored from %s in %s", checkpoint, run).isEqualTo(3);
        assertExactResults(spec);
    }

    /** (e) Stop with a savepoint into a file:// directory, then resume from it. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void resumesFromStopWithSavepoint(WorkingState workingState) throws Exception {
        start("savepoint", workingState, 3);
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500);
        RunRegistry.Run run = RunRegistry.run(runId);
        String savepointDirectory = tempDir.resolve("savepoints").toUri().toString();

        JobID first = cluster.submit(spec, 2, cluster.jobConfiguration(c -> c.set(
                CheckpointingOptions.SAVEPOINT_DIRECTORY, savepointDirectory)));
        cluster.awaitWhileJobRuns(first, "a completed checkpoint", () -> run.completedCheckpointNotifications() > 0);
        String savepoint = cluster.miniCluster()
                .stopWithSavepoint(first, savepointDirectory, false, SavepointFormatType.CANONICAL)
                .get(Sr3TestCluster.JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(cluster.awaitResult(first).getJobStatus()).hasValue(JobStatus.FINISHED);
        assertThat(savepoint).startsWith("file:");
        assertThat(Paths.get(URI.create(savepoint)).resolve("_metadata")).isRegularFile();
        assertThat(run.totalEmissions()).as("results of the stopped job").isZero();

        JobID second = cluster.submit(spec, 2, cluster.jobConfiguration(c -> {
            c.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, savepointDirectory);
            c.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }));
        JobResult result = cluster.awaitResult(second);

        assertSucceeded(result, run);
        assertThat(run.restoredStarts()).as("instances restored from %s in %s", savepoint, run).isEqualTo(2);
        assertExactResults(spec);
    }
}
