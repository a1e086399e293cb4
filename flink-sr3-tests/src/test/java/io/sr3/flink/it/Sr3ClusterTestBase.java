package io.sr3.flink.it;

import io.sr3.flink.WorkingState;
import org.apache.flink.configuration.Configuration;
import io.sr3.flink.testjob.RunRegistry;
import org.junit.jupiter.api.AfterEach;
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
