package io.sr3.flink.cluster;

import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
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
 * A real cluster (JobManager + TaskManagers as separate JVMs, one ring node in each TaskManager,
 * the JobManager a storage-less ring client) loses TaskManagers to SIGKILL while a stateful job
 * runs; the job restores from the ring and its result is exactly right. With two zones, no block's
 * replicas sit in one zone.
 */
class Sr3ProcessClusterFailoverITCase extends ProcessClusterTestBase {

    private static final Duration INTERVAL = Duration.ofMillis(500);


    /** Replication factor 2 over two zones; one TaskManager killed; a replacement starts. */
    @Test
    void killOneTaskManagerWithReplicationFactorTwo() throws Exception {
        cluster = ProcessCluster.start(ClusterSpec.sr3(4, 2).withZones(List.of("zone-a", "zone-b")), ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(TransportSecurity.none(), Duration.ofSeconds(2));
        awaitRingSize(stats, cluster.liveTaskManagers(), 4);
        runKillAndRecover(2, 1, "zone-a", "zone-a, zone-b");
    }

    /** Replication factor 3; two TaskManagers killed at the same moment; two replacements start. */
    @Test
    void killTwoTaskManagersAtOnceWithReplicationFactorThree() throws Exception {
        cluster = ProcessCluster.start(ClusterSpec.sr3(4, 3), ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(TransportSecurity.none(), Duration.ofSeconds(2));
        awaitRingSize(stats, cluster.liveTaskManagers(), 4);
        runKillAndRecover(3, 2, "", "none");
    }

    private void runKillAndRecover(int replication, int victims, String replacementZone, String zones) throws Exception {
        TestJobSpec spec = TestJobSpec.of("process-rf" + replication).withRecords(16_000, 800).withKeys(64)
                .withPayload(2048, 4);
        Path results = tempDir.resolve("results");
        JobID job = cluster.submit(ClusterJobs.statefulJob(spec, 4, results, INTERVAL, false, null));
        cluster.awaitAllTasksRunning(job, JOB_TIMEOUT);
        Deadline.poll("two completed checkpoints of " + job, JOB_TIMEOUT, () -> cluster.completedCheckpoints(job) >= 2,
                () -> cluster.checkpoints(job).toString());
        Map<String, Map<String, Long>> before = ringStats(stats, cluster.liveTaskManagers());
        assertThat(before.values()).as("ring nodes hold checkpoint data before the kill: %s", before)
                .allSatisfy(s -> assertThat(s.get("bytesStored")).isPositive());
        assertThat(sum(before, "auditBlocksInOneZone"))
                .as("blocks whose replicas all sit in one zone although the ring spans two (zones: %s)", zones)
                .isZero();

        List<FlinkProcess> live = cluster.liveTaskManagers();
        FlinkProcess[] killed = live.subList(1, 1 + victims).toArray(new FlinkProcess[0]);
        cluster.kill(killed);
        for (int i = 0; i < victims; i++) {
            cluster.startTaskManager(replacementZone);
        }

        cluster.awaitJobStatus(job, JOB_TIMEOUT, "FINISHED");
        JsonNode checkpoints = cluster.checkpoints(job);
        JsonNode restored = checkpoints.path("latest").path("restored");
        assertThat(restored.path("external_path").asText())
                .as("the job restored from a checkpoint on the ring: %s", checkpoints)
                .startsWith("sr3:");
        assertExactResults(results, spec);
        Map<String, Map<String, Long>> after = ringStats(stats, cluster.liveTaskManagers());
        assertThat(sum(after, "bytesRead")).as("bytes read from the ring by the restored tasks: %s", after).isPositive();
    }
}
