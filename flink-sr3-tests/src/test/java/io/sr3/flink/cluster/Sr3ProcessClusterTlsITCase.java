package io.sr3.flink.cluster;

import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.tls.TestCertificates;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.Test;

import java.io.IOException;
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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A real cluster with Flink's internal TLS switched on the way a Flink user does it
 * ({@code security.ssl.internal.*}, one keystore and truststore for every process): the ring
 * follows it without any {@code sr3.*} security setting, a plaintext peer cannot read a
 * TaskManager's ring counters, and a job restores exactly after a TaskManager is killed.
 */
class Sr3ProcessClusterTlsITCase extends ProcessClusterTestBase {

    @Test
    void theRingFollowsFlinksInternalTlsAndAJobRestoresExactlyOverIt() throws Exception {
        TestCertificates ca = TestCertificates.newCa(tempDir.resolve("tls"), "cluster-ca");
        Path keystore = ca.node("flink");
        Map<String, String> tls = Map.of(
                "security.ssl.internal.enabled", "true",
                "security.ssl.internal.keystore", keystore.toString(),
                "security.ssl.internal.keystore-password", TestCertificates.PASSWORD,
                "security.ssl.internal.key-password", TestCertificates.PASSWORD,
                "security.ssl.internal.truststore", ca.truststore().toString(),
                "security.ssl.internal.truststore-password", TestCertificates.PASSWORD);
        cluster = ProcessCluster.start(ClusterSpec.sr3(3, 2).withExtraConfig(tls),
                ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(new TransportSecurity(ca.settings(keystore), null, false), Duration.ofSeconds(5));
        awaitRingSize(stats, cluster.liveTaskManagers(), 3);
        try (RingStatsClient plaintext = new RingStatsClient(TransportSecurity.none(), Duration.ofSeconds(2))) {
            String ringAddress = cluster.liveTaskManagers().get(0).ringAddress();
            assertThatThrownBy(() -> plaintext.stats(ringAddress)).as("a plaintext peer").isInstanceOf(IOException.class);
        }

        TestJobSpec spec = TestJobSpec.of("process-tls").withRecords(12_000, 800).withKeys(32).withPayload(1024, 4);
        Path results = tempDir.resolve("results");
        JobID job = cluster.submit(ClusterJobs.statefulJob(spec, 3, results, Duration.ofMillis(500), false, null));
        cluster.awaitAllTasksRunning(job, JOB_TIMEOUT);
        Deadline.poll("two completed checkpoints of " + job, JOB_TIMEOUT,
                () -> cluster.completedCheckpoints(job) >= 2, () -> cluster.checkpoints(job).toString());
        List<FlinkProcess> live = cluster.liveTaskManagers();
        cluster.kill(live.get(1));
        cluster.startTaskManager("");
        cluster.awaitJobStatus(job, JOB_TIMEOUT, "FINISHED");
        assertThat(cluster.checkpoints(job).path("latest").path("restored").path("external_path").asText())
                .as("restored from the ring").startsWith("sr3:");
        assertExactResults(results, spec);
        Map<String, Map<String, Long>> after = ringStats(stats, cluster.liveTaskManagers());
        assertThat(sum(after, "bytesRead")).as("bytes the restored tasks read over TLS: %s", after).isPositive();
        assertThat(sum(after, "refusedHandshakes")).as("the plaintext peer was refused: %s", after).isPositive();
    }
}
