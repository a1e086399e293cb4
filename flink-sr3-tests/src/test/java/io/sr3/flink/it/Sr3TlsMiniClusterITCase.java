package io.sr3.flink.it;

import io.sr3.flink.WorkingState;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.testjob.TestJobSpec.FailureMode;
import io.sr3.flink.tls.TestCertificates;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static io.sr3.flink.it.Sr3ITCaseSupport.assertExactResults;
import static io.sr3.flink.it.Sr3ITCaseSupport.assertSucceeded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A MiniCluster job whose ring runs mutual TLS ({@code sr3.transport.ssl.*}, certificates of one
 * CA): a task failure restores from the ring over TLS with an exact result.
 */
class Sr3TlsMiniClusterITCase extends Sr3ClusterTestBase {

    @Test
    void aTaskFailureRestoresExactlyOverATlsRing() throws Exception {
        TestCertificates ca = TestCertificates.newCa(tempDir.resolve("tls"), "mini-ca");
        Path keystore = ca.node("ring");
        start("tls-task-failure", WorkingState.ROCKSDB, 3, c -> {
            c.setString("sr3.transport.ssl.enabled", "true");
            c.setString("sr3.transport.ssl.keystore", keystore.toString());
            c.setString("sr3.transport.ssl.keystore-password", TestCertificates.PASSWORD);
            c.setString("sr3.transport.ssl.truststore", ca.truststore().toString());
            c.setString("sr3.transport.ssl.truststore-password", TestCertificates.PASSWORD);
        });
        for (RingNode node : cluster.nodes()) {
            assertThat(node.config().security().tls()).as("TLS on %s", node).isNotNull();
        }
        // 8 s of input, so the failure comes after a completed checkpoint even when the first one is slow.
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(8_000, 1_000).withFailure(FailureMode.AFTER_CHECKPOINT, 300);

        JobID job = cluster.submit(spec, 2, cluster.jobConfiguration(c -> {}));
        JobResult result = cluster.awaitResult(job);

        RunRegistry.Run run = RunRegistry.run(runId);
        assertSucceeded(result, run);
        assertThat(run.restoredStarts()).as("instances restored from a checkpoint in %s", run).isPositive();
        assertExactResults(spec);
        long read = 0;
        for (RingNode node : cluster.nodes()) {
            read += node.stats().get("bytesRead");
            assertThat(node.refusedHandshakes()).isZero();
        }
        assertThat(read).as("bytes the restore read from the ring").isPositive();
    }
}
