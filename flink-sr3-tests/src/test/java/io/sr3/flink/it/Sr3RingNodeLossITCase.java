package io.sr3.flink.it;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.WorkingState;
import io.sr3.flink.node.BlockUnavailableException;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.NodeMetrics;
import io.sr3.flink.node.ReplicasUnreachableException;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.testing.Deadline;
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
import java.util.concurrent.TimeUnit;

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

    /**
     * (g) With fewer live nodes than {@code sr3.ring.min-replicas} no checkpoint completes: the
     * checkpoint fails naming the write quorum, and after a failure the job goes on from the last
     * checkpoint that had every copy, with an exact result. A seed marks the ring as one of several
     * processes, where the quorum is never lowered.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void aCheckpointBelowTheWriteQuorumFailsAndTheJobGoesOnFromThePreviousOne(WorkingState workingState) throws Exception {
        int unusedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            unusedPort = socket.getLocalPort();
        }
        start("below-quorum", workingState, 3, c -> {
            c.set(Sr3Options.REPLICATION_FACTOR, 3);
            c.set(Sr3Options.RING_SEEDS, List.of("127.0.0.1:" + unusedPort));
        });
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500).withFailure(FailureMode.WHEN_ARMED, 0);
        RunRegistry.Run run = RunRegistry.run(runId);
        List<RingNode> nodes = cluster.nodes();
        JobID job = cluster.submit(spec, 2, cluster.jobConfiguration(Sr3TestCluster::manualCheckpointsOnly));
        String complete = checkpointAndAwaitNotification(job, run, 2);

        nodes.get(2).close();
        Deadline.poll("the ring to drop the stopped node", Sr3TestCluster.JOB_TIMEOUT,
                () -> nodes.get(0).membership().members().size() == 2);
        java.util.concurrent.ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class,
                () -> cluster.miniCluster().triggerCheckpoint(job).get(Sr3TestCluster.JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        assertThat(causeTree(refused)).as("why the checkpoint failed").anySatisfy(t ->
                assertThat(String.valueOf(t.getMessage())).contains("sr3.ring.min-replicas"));
        assertThat(nodes.get(0).metrics().failedWrites.get() + nodes.get(1).metrics().failedWrites.get()).isPositive();

        run.armFailure();
        Deadline.poll("a restore from " + complete, Sr3TestCluster.JOB_TIMEOUT,
                () -> run.restoredStarts() > 0);
        // The job can only finish once a checkpoint completes again (Flink checkpoints finished tasks).
        RingNode back = RingNode.start(nodes.get(2).config().withPortAndStore(0, nodes.get(2).store().directory()));
        try {
            JobResult result = cluster.awaitResult(job);
            assertSucceeded(result, run);
            assertExactResults(spec);
        } finally {
            back.close();
        }
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
