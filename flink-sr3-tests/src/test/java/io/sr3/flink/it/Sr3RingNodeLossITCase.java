package io.sr3.flink.it;

import io.sr3.flink.WorkingState;
import io.sr3.flink.node.BlockUnavailableException;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.NodeMetrics;
import io.sr3.flink.node.ReplicasUnreachableException;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.testjob.TestJobSpec.FailureMode;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.util.SerializedThrowable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.FileNotFoundException;
import java.time.Duration;
import java.util.List;

import static io.sr3.flink.it.Sr3ITCaseSupport.assertExactResults;
import static io.sr3.flink.it.Sr3ITCaseSupport.assertSucceeded;
import static io.sr3.flink.it.Sr3ITCaseSupport.causeTree;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Restores after ring nodes holding replicas stopped: with one of three nodes lost (replication
 * factor 2) the job restores from the surviving replicas and is exactly right; with two lost it
 * fails with an error naming the lost file and block, and never emits a result.
 *
 * <p>Checkpoints are triggered by the test only, so the restore provably reads a checkpoint that
 * was written while every node was up (a checkpoint written after the loss would not prove
 * anything, and with two nodes lost it could even be complete on the last one).
 */
class Sr3RingNodeLossITCase extends Sr3ClusterTestBase {


    /** (c) The FileSystem's own node (first replica of everything) stops; a task fails; restore from the other replicas. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void restoresFromSurvivingReplicasAfterLosingOneNode(WorkingState workingState) throws Exception {
        start("one-node-lost", workingState, 3);
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500).withFailure(FailureMode.WHEN_ARMED, 0);
        RunRegistry.Run run = RunRegistry.run(runId);
        List<RingNode> nodes = cluster.nodes();
        assertThat(LocalRing.current()).isSameAs(nodes.get(0));

        JobID job = cluster.submit(spec, 2, cluster.jobConfiguration(Sr3TestCluster::manualCheckpointsOnly));
        String checkpoint = checkpointAndAwaitNotification(job, run, 2);
        assertThat(run.totalEmissions()).as("results before the failure").isZero();

        long[] before = readCounters(nodes.subList(1, 3));
        nodes.get(0).close();
        assertThat(LocalRing.current()).as("the next oldest node serves the FileSystem").isSameAs(nodes.get(1));
        run.armFailure();
        JobResult result = cluster.awaitResult(job);

        assertSucceeded(result, run);
        assertThat(run.failureInjected()).as("failure injected in %s", run).isTrue();
        assertThat(run.restoredStarts()).as("instances restored from %s in %s", checkpoint, run).isPositive();
        assertExactResults(spec);
        long[] after = readCounters(nodes.subList(1, 3));
        assertThat(after[0] - before[0]).as("bytes the surviving nodes read from the ring during the restore").isPositive();
        assertThat((after[1] - before[1]) + (after[2] - before[2]))
                .as("remote reads plus replica fallbacks of the surviving nodes: replicas of the lost node were used")
                .isPositive();
    }

    /** (f) Two of three nodes stop (replication factor 2): the restore must fail loudly, never use wrong state. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void failsWithoutResultWhenMoreReplicasAreLostThanTolerated(WorkingState workingState) throws Exception {
        start("two-nodes-lost", workingState, 3);
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500).withFailure(FailureMode.WHEN_ARMED, 0);
        RunRegistry.Run run = RunRegistry.run(runId);
        List<RingNode> nodes = cluster.nodes();

        JobID job = cluster.submit(spec, 2, cluster.jobConfiguration(c -> {
            Sr3TestCluster.manualCheckpointsOnly(c);
            c.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 2);
            c.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
            // Keep the unrestorable checkpoint when the job fails: there is nothing to gain from
            // deleting it, and its deletion would wait on the stopped nodes.
            c.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        }));
        checkpointAndAwaitNotification(job, run, 2);

        nodes.get(0).close();
        nodes.get(1).close();
        assertThat(LocalRing.current()).isSameAs(nodes.get(2));
        run.armFailure();
        JobResult result = cluster.awaitResult(job);

        assertThat(result.isSuccess()).as("job with lost state must not finish; %s", run).isFalse();
        assertThat(run.failureInjected()).as("failure injected in %s", run).isTrue();
        assertThat(run.totalEmissions()).as("results emitted by %s", run).isZero();
        assertThat(run.results()).isEmpty();
        SerializedThrowable failure = result.getSerializedThrowable().orElseThrow();
        Throwable cause = failure.deserializeError(getClass().getClassLoader());
        assertThat(causeTree(cause))
                .as("cause chain of the job failure:%n%s", failure.getFullStringifiedStackTrace())
                .anySatisfy(t -> {
                    assertThat(isLostState(t)).as("%s is a lost block or a lost manifest", t).isTrue();
                    assertThat(t.getMessage()).contains("sr3://");
                    if (isA(t, BlockUnavailableException.class)) {
                        assertThat(t.getMessage()).contains("(block ");
                    }
                    if (isA(t, ReplicasUnreachableException.class)) {
                        assertThat(t.getMessage()).contains("unavailable, not lost");
                    }
                });
    }

    private String checkpointAndAwaitNotification(JobID job, RunRegistry.Run run, int parallelism) throws Exception {
        // The job's tasks must be running before a checkpoint can be triggered.
        cluster.awaitWhileJobRuns(job, "all " + parallelism + " injector instances to start",
                () -> run.starts().size() >= parallelism);
        String checkpoint = cluster.triggerCheckpoint(job);
        assertThat(checkpoint).startsWith("sr3:");
        cluster.awaitWhileJobRuns(job, "every injector instance to learn that " + checkpoint + " completed",
                () -> run.completedCheckpointNotifications() >= parallelism);
        return checkpoint;
    }

    /** {bytes read, bytes read remotely, replica fallbacks}, summed over {@code nodes}. */
    private static long[] readCounters(List<RingNode> nodes) {
        long[] sums = new long[3];
        for (RingNode node : nodes) {
            NodeMetrics m = node.metrics();
            sums[0] += m.bytesRead.get();
            sums[1] += m.bytesReadRemote.get();
            sums[2] += m.replicaFallbacks.get();
        }
        return sums;
    }

    /** Lost, or unavailable because its holders are stopped (they may come back, so it is not reported missing). */
    private static boolean isLostState(Throwable t) {
        return isA(t, BlockUnavailableException.class) || isA(t, FileNotFoundException.class)
                || isA(t, ReplicasUnreachableException.class);
    }

    /** Also true for a {@link SerializedThrowable} standing in for such an exception. */
    private static boolean isA(Throwable t, Class<? extends Throwable> type) {
        if (type.isInstance(t)) {
            return true;
        }
        if (t instanceof SerializedThrowable serialized) {
            try {
                return type.isAssignableFrom(Class.forName(serialized.getOriginalErrorClassName()));
            } catch (ClassNotFoundException e) {
                return false;
            }
        }
        return false;
    }
}
