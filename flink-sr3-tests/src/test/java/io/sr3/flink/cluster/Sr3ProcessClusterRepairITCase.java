package io.sr3.flink.cluster;

import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.sr3.flink.cluster.ProcessClusterTestSupport.JOB_TIMEOUT;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.assertExactResults;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.awaitRingSize;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.ringStats;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.sum;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Self-healing: a checkpoint retained on the ring (replication factor 2, four TaskManagers, every
 * TaskManager the first holder of its subtask's files) loses a holder to SIGKILL; the survivors
 * re-replicate until no block is under the factor, polled through the nodes' counters with a
 * deadline. A second TaskManager is then killed, which without the repair would have lost every
 * block the two shared, and the job restores from the retained checkpoint exactly right.
 */
class Sr3ProcessClusterRepairITCase extends ProcessClusterTestBase {


    @Test
    void underReplicatedBlocksReturnToZeroAfterAKillAndTheCheckpointSurvivesTheNextKill() throws Exception {
        cluster = ProcessCluster.start(ClusterSpec.sr3(4, 2), ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(TransportSecurity.none(), Duration.ofSeconds(2));
        awaitRingSize(stats, cluster.liveTaskManagers(), 4);
        TestJobSpec spec = TestJobSpec.of("process-repair").withRecords(16_000, 800).withKeys(64).withPayload(2048, 4);
        Path results = tempDir.resolve("results");

        JobID first = cluster.submit(ClusterJobs.statefulJob(spec, 4, results, Duration.ofMillis(500), true, null));
        cluster.awaitAllTasksRunning(first, JOB_TIMEOUT);
        Deadline.poll("two completed checkpoints of " + first, JOB_TIMEOUT,
                () -> cluster.completedCheckpoints(first) >= 2, () -> cluster.checkpoints(first).toString());
        cluster.cancel(first);
        cluster.awaitJobStatus(first, JOB_TIMEOUT, "CANCELED");
        String retained = cluster.checkpoints(first).path("latest").path("completed").path("external_path").asText();
        assertThat(retained).as("retained checkpoint of %s", first).startsWith("sr3:");
        assertThat(sum(ringStats(stats, cluster.liveTaskManagers()), "auditUnderReplicatedBlocks"))
                .as("under-replicated blocks before any kill").isZero();

        List<FlinkProcess> tms = cluster.liveTaskManagers();
        cluster.kill(tms.get(1));
        List<FlinkProcess> survivors = cluster.liveTaskManagers();
        awaitRingSize(stats, survivors, 3);
        awaitRepaired(survivors);
        Map<String, Map<String, Long>> afterRepair = ringStats(stats, survivors);
        assertThat(sum(afterRepair, "blocksReReplicated"))
                .as("blocks copied by the survivors: the killed node was the first holder of its subtask's files; %s",
                        afterRepair)
                .isPositive();

        cluster.kill(tms.get(2));
        List<FlinkProcess> last = cluster.liveTaskManagers();
        awaitRingSize(stats, last, 2);
        JobID second = cluster.submit(ClusterJobs.statefulJob(spec.withRecords(spec.records(), 0), 2, results,
                Duration.ofMillis(500), false, retained));
        cluster.awaitJobStatus(second, JOB_TIMEOUT, "FINISHED");
        assertExactResults(results, spec);
    }

    private void awaitRepaired(List<FlinkProcess> nodes) {
        Deadline.poll("no under-replicated block on " + nodes, Duration.ofSeconds(60), () -> {
            Map<String, Map<String, Long>> all = ringStats(stats, nodes);
            return all.size() == nodes.size()
                    && all.values().stream().allMatch(s -> s.get("repairPending") == 0
                            && s.get("underReplicatedBlocks") == 0 && s.get("auditUnderReplicatedBlocks") == 0
                            && s.get("repairScans") > 0);
        }, () -> ringStats(stats, nodes).toString());
    }
}
