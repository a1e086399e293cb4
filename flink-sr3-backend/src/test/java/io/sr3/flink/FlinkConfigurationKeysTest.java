package io.sr3.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageLoader;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The keys the README documents select flink-sr3 through Flink's own configuration file parser
 * and Flink's own loaders ({@link StateBackendLoader}, {@link CheckpointStorageLoader}), on the
 * Flink line the build targets: the 2.x names and the 1.x names in {@code config.yaml}, and the
 * 1.x names in the legacy {@code flink-conf.yaml}, which only Flink 1.x reads.
 */
class FlinkConfigurationKeysTest {

    private static final String ONE_X_KEYS = """
            state.backend: io.sr3.flink.Sr3StateBackendFactory
            state.checkpoint-storage: io.sr3.flink.Sr3CheckpointStorageFactory
            state.checkpoints.dir: sr3:///checkpoints
            """;

    private static final String TWO_X_KEYS = """
            state.backend.type: io.sr3.flink.Sr3StateBackendFactory
            execution.checkpointing.storage: io.sr3.flink.Sr3CheckpointStorageFactory
            execution.checkpointing.dir: sr3:///checkpoints
            """;

    @TempDir
    Path confDir;

    @Test
    void twoXKeysInConfigYaml() throws Exception {
        assertSelectsSr3(load("config.yaml", TWO_X_KEYS));
    }

    @Test
    void oneXKeysInConfigYaml() throws Exception {
        assertSelectsSr3(load("config.yaml", ONE_X_KEYS));
    }

    @Test
    void oneXKeysInLegacyFlinkConfYaml() throws Exception {
        assumeTrue(EnvironmentInformation.getVersion().startsWith("1."),
                () -> "Flink " + EnvironmentInformation.getVersion() + " reads config.yaml only");
        assertSelectsSr3(load("flink-conf.yaml", ONE_X_KEYS));
    }

    private Configuration load(String fileName, String contents) throws IOException {
        Files.writeString(confDir.resolve(fileName), contents);
        return GlobalConfiguration.loadConfiguration(confDir.toString());
    }

    private static void assertSelectsSr3(Configuration config) throws Exception {
        ClassLoader classLoader = FlinkConfigurationKeysTest.class.getClassLoader();
        StateBackend backend = StateBackendLoader.loadStateBackendFromConfig(config, classLoader, null);
        assertThat(backend).isInstanceOf(Sr3StateBackend.class);
        CheckpointStorage storage = CheckpointStorageLoader.fromConfig(config, classLoader, null).orElseThrow();
        assertThat(storage).isInstanceOf(Sr3CheckpointStorage.class);
        assertThat(((Sr3CheckpointStorage) storage).getCheckpointPath().toUri())
                .hasScheme("sr3").hasPath("/checkpoints");
    }
}
