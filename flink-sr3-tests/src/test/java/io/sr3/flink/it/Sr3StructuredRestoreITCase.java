package io.sr3.flink.it;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.WorkingState;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.restore.RestoreReport;
import io.sr3.flink.restore.RestoreStats;
import io.sr3.flink.restore.RestoreStrategy;
import io.sr3.flink.node.Structure;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.testjob.TestJobSpec.FailureMode;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static io.sr3.flink.it.Sr3ITCaseSupport.assertExactResults;
import static io.sr3.flink.it.Sr3ITCaseSupport.assertSucceeded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every restore structure, forced with {@code sr3.restore.strategy}, brings a failed job back
 * exactly right with either working state: the node that wrote the checkpoint stops, so the
 * restoring node fetches blocks from the other holders through the plan (RocksDB through
 * {@code copyFiles}, heap through the prefetch).
 */
class Sr3StructuredRestoreITCase extends Sr3ClusterTestBase {

    static Stream<Arguments> structuresAndWorkingStates() {
        return Stream.of(Structure.values())
                .flatMap(s -> Stream.of(WorkingState.values()).map(w -> Arguments.of(s, w)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("structuresAndWorkingStates")
    void forcedStructureRestoresExactly(Structure structure, WorkingState workingState) throws Exception {
        // 1 kb blocks: even the heap state of one subtask spans blocks on every holder, so tree can run.
        start("restore-" + structure.name().toLowerCase(), workingState, 6, c -> {
            c.set(Sr3Options.RESTORE_STRATEGY, RestoreStrategy.valueOf(structure.name()));
            c.set(Sr3Options.BLOCK_SIZE, MemorySize.parse("1kb"));
        });
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(6_000, 1_500).withFailure(FailureMode.WHEN_ARMED, 0);
        RunRegistry.Run run = RunRegistry.run(runId);
        List<RingNode> nodes = cluster.nodes();

        JobID job = cluster.submit(spec, 2, cluster.jobConfiguration(Sr3TestCluster::manualCheckpointsOnly));
        cluster.awaitWhileJobRuns(job, "both injector instances to start", () -> run.starts().size() >= 2);
        String checkpoint = cluster.triggerCheckpoint(job);
        cluster.awaitWhileJobRuns(job, "every injector instance to learn that " + checkpoint + " completed",
                () -> run.completedCheckpointNotifications() >= 2);

        nodes.get(0).close(); // it held the first replica of every block of the checkpoint
        RingNode recovering = LocalRing.current();
        assertThat(recovering).isSameAs(nodes.get(1));
        run.armFailure();
        JobResult result = cluster.awaitResult(job);

        assertSucceeded(result, run);
        assertThat(run.restoredStarts()).as("instances restored from %s in %s", checkpoint, run).isPositive();
        assertExactResults(spec);
        RestoreStats stats = RestoreStats.of(recovering);
        long planned = Stream.of(Structure.values()).mapToLong(stats::restores).sum();
        assertThat(planned).as("restores that went through a plan on %s", recovering).isPositive();
        RestoreReport last = stats.last();
        assertThat(last.requested()).isEqualTo(structure);
        assertThat(last.structure() == structure || last.note() != null)
                .as("the last restore used %s or said why not: %s", structure, last.logLine())
                .isTrue();
        assertThat(stats.restores(structure)).as("restores by %s", structure).isPositive();
    }
}
