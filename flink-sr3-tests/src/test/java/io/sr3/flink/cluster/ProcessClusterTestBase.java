package io.sr3.flink.cluster;

import io.sr3.flink.node.RingStatsClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * One multi-process cluster per test, and optionally a client of its ring counters; both are
 * closed after the test, which kills every process the cluster started, also when the test failed.
 */
abstract class ProcessClusterTestBase {

    @TempDir
    Path tempDir;

    ProcessCluster cluster;
    RingStatsClient stats;

    @AfterEach
    void tearDown() {
        if (stats != null) {
            stats.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }
}
