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
import java.util.Map;

import static io.sr3.flink.cluster.ProcessClusterTestSupport.JOB_TIMEOUT;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.assertExactResults;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.awaitRingSize;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.ringStats;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.sum;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bounded space: after 200 checkpoints of a job with a steady state size (RocksDB, incremental, so
 * shared files are referenced by many checkpoints), the bytes all ring nodes store stay within a
 * small factor of retained checkpoints x state size x replication factor; and the retained
 * checkpoint still restores exactly, so no shared file a retained checkpoint uses was deleted.
 */
class Sr3ProcessClusterSpaceITCase extends ProcessClusterTestBase {

    /** Room for one checkpoint being written while the retained one is still referenced, plus headers and manifests. */
    private static final double FACTOR = 3.0;
    private static final int CHECKPOINTS = 200;


    @Test
    void ringBytesStayBoundedOverTwoHundredCheckpoints() throws Exception {
        ClusterSpec clusterSpec = ClusterSpec.sr3(2, 2).withCheckpointInterval(Duration.ofMillis(100))
                .withExtraConfig(Map.of("sr3.store.orphan-grace-period", "5 s"));
        cluster = ProcessCluster.start(clusterSpec, ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(TransportSecurity.none(), Duration.ofSeconds(2));
        awaitRingSize(stats, cluster.liveTaskManagers(), 2);
        // 64 keys x 4 slots x 1 KiB: every slot is filled after 256 records, then the state size stays put.
        TestJobSpec spec = TestJobSpec.of("process-space").withRecords(400_000, 1_000).withKeys(64).withPayload(1024, 4);
        Path results = tempDir.resolve("results");
        JobID job = cluster.submit(ClusterJobs.statefulJob(spec, 2, results, Duration.ofMillis(100), true, null));
        Deadline.poll(CHECKPOINTS + " completed checkpoints of " + job, Duration.ofSeconds(240),
                () -> cluster.completedCheckpoints(job) >= CHECKPOINTS, () -> cluster.checkpoints(job).path("counts").toString());

        JsonNode latest = cluster.checkpoints(job).path("latest").path("completed");
        long stateSize = latest.path("state_size").asLong();
        Map<String, Map<String, Long>> ring = ringStats(stats, cluster.liveTaskManagers());
        long ringBytes = sum(ring, "bytesStored");
        long bound = (long) (FACTOR * 1 * stateSize * clusterSpec.replicationFactor());
        System.out.printf("[space] after %d checkpoints: ring %d bytes, state %d bytes, bound %d bytes (%.2fx of "
                + "retained x state x replication); %s%n", cluster.completedCheckpoints(job), ringBytes, stateSize, bound,
                ringBytes / (double) (stateSize * clusterSpec.replicationFactor()), ring);
        assertThat(stateSize).as("state size of the latest checkpoint: %s", latest).isPositive();
        assertThat(ringBytes)
                .as("bytes on the ring after %d checkpoints (state %d bytes, 1 retained, replication 2): %s",
                        cluster.completedCheckpoints(job), stateSize, ring)
                .isLessThanOrEqualTo(bound);

        cluster.cancel(job);
        cluster.awaitJobStatus(job, JOB_TIMEOUT, "CANCELED");
        String retained = cluster.checkpoints(job).path("latest").path("completed").path("external_path").asText();
        JobID resumed = cluster.submit(ClusterJobs.statefulJob(spec.withRecords(spec.records(), 0), 2, results,
                Duration.ofSeconds(10), false, retained));
        cluster.awaitJobStatus(resumed, JOB_TIMEOUT, "FINISHED");
        assertExactResults(results, spec);
    }
}
