package io.sr3.flink.it;

import io.sr3.flink.WorkingState;
import org.apache.flink.configuration.Configuration;
import io.sr3.flink.testjob.RunRegistry;
import org.junit.jupiter.api.AfterEach;
import org.rocksdb.RocksDB;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.function.Consumer;

/** One {@link Sr3TestCluster} and one test-job run per test, both torn down after it. */
abstract class Sr3ClusterTestBase {

    @TempDir
    Path tempDir;

    Sr3TestCluster cluster;
    String runId;

    /** Starts the cluster and names the run; call once at the start of a test. */
    void start(String scenario, WorkingState workingState, int ringNodes) throws Exception {
        start(scenario, workingState, ringNodes, c -> {});
    }

    /** Like {@link #start(String, WorkingState, int)} with other {@code sr3.*} options. */
    void start(String scenario, WorkingState workingState, int ringNodes, Consumer<Configuration> sr3Tweaks) throws Exception {
        if (workingState == WorkingState.ROCKSDB) {
            // Load RocksDB's native library before the clock starts: the first load in a JVM unpacks it, which
            // can hold the first RocksDB job's tasks for seconds, past the end of its input, when this class
            // runs alone (as on Flink 1.20). Later loads, Flink's included, are no-ops.
            RocksDB.loadLibrary();
        }
        cluster = new Sr3TestCluster(tempDir, workingState, ringNodes, sr3Tweaks);
        runId = Sr3ITCaseSupport.runId(scenario, workingState);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        if (runId != null) {
            RunRegistry.remove(runId);
        }
    }
}
