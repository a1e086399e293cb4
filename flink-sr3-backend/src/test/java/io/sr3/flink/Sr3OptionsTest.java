package io.sr3.flink;

import io.sr3.flink.node.NodeConfig;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class Sr3OptionsTest {

    private static Configuration config(String key, String value) {
        Configuration config = new Configuration();
        config.setString(key, value);
        return config;
    }

    @Test
    void defaultsDescribeASingleHostRing() {
        NodeConfig node = Sr3Options.nodeConfig(new Configuration());
        assertThat(node.host()).isEqualTo("127.0.0.1");
        assertThat(node.replicationFactor()).isEqualTo(2);
        assertThat(node.blockSize()).isEqualTo(4 * 1024 * 1024);
        assertThat(node.security().tls()).isNull();
        assertThat(node.secret()).as("a ring of one process authenticates with a random secret of this JVM")
                .isNotNull().isEqualTo(Sr3Options.nodeConfig(new Configuration()).secret());
    }

    @Test
    void aRingAcrossProcessesHasNoSecretUnlessOneIsSetAndNoneIsSaidExplicitly() {
        Configuration config = config("sr3.ring.seeds", "10.0.0.1:6130");
        config.setString("sr3.ring.host", "10.0.0.2");
        NodeConfig node = Sr3Options.nodeConfig(config);
        assertThat(node.security().authenticates()).isFalse();
        assertThat(node.security().unauthenticatedAllowed()).isFalse();
        config.setString("sr3.transport.authentication", "none");
        assertThat(Sr3Options.nodeConfig(config).security().unauthenticatedAllowed()).isTrue();
        config.setString("sr3.transport.secret", "s3cret-value");
        NodeConfig withSecret = Sr3Options.nodeConfig(config);
        assertThat(withSecret.secret()).isEqualTo("s3cret-value");
        assertThat(withSecret.toString()).doesNotContain("s3cret-value");
    }

    @Test
    void tlsFollowsFlinksInternalTlsSettingsAndNamesWhatIsMissing(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Configuration config = config("security.ssl.internal.enabled", "true");
        assertThatThrownBy(() -> Sr3Options.nodeConfig(config)).isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("sr3.transport.ssl.keystore").hasMessageContaining("security.ssl.internal.keystore");
        Path keystore = Files.write(dir.resolve("node.p12"), new byte[] {1});
        Path truststore = Files.write(dir.resolve("ca.p12"), new byte[] {1});
        config.setString("security.ssl.internal.keystore", keystore.toString());
        config.setString("security.ssl.internal.truststore", truststore.toString());
        config.setString("security.ssl.internal.keystore-password", "ks-pass-value");
        config.setString("security.ssl.internal.truststore-password", "ts-pass-value");
        NodeConfig node = Sr3Options.nodeConfig(config);
        assertThat(node.security().tls().keystore()).isEqualTo(keystore);
        assertThat(node.security().tls().keyPassword()).as("defaults to the keystore password").isEqualTo("ks-pass-value");
        assertThat(node.security().tls().protocols()).containsExactly("TLSv1.2");
        assertThat(node.secret()).as("no random secret when TLS authenticates").isNull();
        assertThat(node.toString()).doesNotContain("ks-pass-value").doesNotContain("ts-pass-value");
        config.setString("sr3.transport.ssl.keystore", dir.resolve("missing.p12").toString());
        assertThatThrownBy(() -> Sr3Options.nodeConfig(config)).hasMessageContaining("sr3.transport.ssl.keystore")
                .hasMessageContaining("no readable file");
    }

    @Test
    void unknownKeyFailsNamingKeyAndValue() {
        assertThatThrownBy(() -> new Sr3StateBackendFactory().createFromConfig(
                        config("sr3.ring.replicaton-factor", "3"), getClass().getClassLoader()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("sr3.ring.replicaton-factor")
                .hasMessageContaining("'3'")
                .hasMessageContaining("sr3.ring.replication-factor");
    }

    @Test
    void unknownSecretKeyDoesNotPrintTheValue() {
        assertThatThrownBy(() -> Sr3Options.nodeConfig(config("sr3.transport.secrt", "hunter2")))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("sr3.transport.secrt")
                .hasMessageNotContaining("hunter2");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "sr3.working-state              | memory   | one of [rocksdb, heap]",
        "sr3.restore.strategy           | fastest  | one of [auto, star, line, tree]",
        "sr3.restore.tree-fan-in        | 1        | between 2 and 64",
        "sr3.restore.max-concurrent-fetches | 0    | between 1 and 256",
        "sr3.ring.replication-factor    | zero     | an integer",
        "sr3.ring.replication-factor    | 0        | between 1 and 16",
        "sr3.ring.port                  | 70000    | 0..65535",
        "sr3.ring.port                  | http     | a port",
        "sr3.ring.seeds                 | nohost   | host:port",
        "sr3.block.size                 | 64mb     | max-frame-size",
        "sr3.block.size                 | big      | a size",
        "sr3.transport.request-timeout  | 0 ms     | positive",
        "sr3.transport.request-timeout  | soon     | a duration",
        "sr3.ring.failure-detector.timeout | 100 ms | longer than",
        "sr3.store.fsync                | maybe    | true or false",
        "sr3.ring.role                  | leader   | one of [storage, client]",
        "sr3.repair.interval            | 0 ms     | positive",
        "sr3.store.max-size             | 1 kb     | at least one block",
        "sr3.store.orphan-grace-period  | 0 s      | positive",
    })
    void invalidValueFailsNamingKeyValueAndRule(String key, String value, String rule) {
        assertThatThrownBy(() -> Sr3Options.nodeConfig(config(key, value)))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'" + key + "'")
                .hasMessageContaining("'" + value + "'")
                .hasMessageContaining(rule)
                .satisfies(e -> assertThat(e.getMessage()).as("no control characters in the message").doesNotContainPattern("\\p{Cntrl}"));
    }

    @Test
    void portRangesAndListsAreExpanded() {
        assertThat(Sr3Options.nodeConfig(config("sr3.ring.port", "6130-6132,6140")).ports())
                .containsExactly(6130, 6131, 6132, 6140);
    }

    @Test
    void checkpointDirectoryMustBeOnTheRing() {
        Configuration config = config(CheckpointingOptions.CHECKPOINTS_DIRECTORY.key(), "file:///tmp/checkpoints");
        assertThatThrownBy(() -> new Sr3CheckpointStorageFactory().createFromConfig(config, getClass().getClassLoader()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("file:///tmp/checkpoints")
                .hasMessageContaining("sr3://");
    }

    @Test
    void savepointsStayOnTheConfiguredDurableDirectory() {
        Configuration config = config(CheckpointingOptions.SAVEPOINT_DIRECTORY.key(), "file:///durable/savepoints");
        Sr3CheckpointStorage storage = new Sr3CheckpointStorageFactory().createFromConfig(config, getClass().getClassLoader());
        assertThat(storage.getCheckpointPath()).isEqualTo(new org.apache.flink.core.fs.Path(Sr3CheckpointStorageFactory.DEFAULT_CHECKPOINT_DIRECTORY));
        assertThat(storage.getSavepointPath().toString()).isEqualTo("file:/durable/savepoints");
    }

    @Test
    void workingStateSelectsTheDelegate() {
        ClassLoader cl = getClass().getClassLoader();
        assertThat(new Sr3StateBackendFactory().createFromConfig(new Configuration(), cl).getName())
                .isEqualTo("Sr3StateBackend(rocksdb)");
        assertThat(new Sr3StateBackendFactory().createFromConfig(config("sr3.working-state", "heap"), cl).getName())
                .isEqualTo("Sr3StateBackend(heap)");
    }

    /** The README's option table is the user's reference: it must list exactly the options in code. */
    @Test
    void readmeListsEveryOptionWithItsDefault() throws Exception {
        Path readme = Paths.get("..", "README.md");
        assertThat(readme).exists();
        Set<String> documented = new LinkedHashSet<>();
        Matcher row = Pattern.compile("^\\| `(sr3\\.[a-z0-9.-]+)` \\|", Pattern.MULTILINE).matcher(Files.readString(readme));
        while (row.find()) {
            documented.add(row.group(1));
        }
        Set<String> inCode = new LinkedHashSet<>();
        for (ConfigOption<?> option : Sr3Options.all()) {
            inCode.add(option.key());
        }
        assertThat(documented).containsExactlyInAnyOrderElementsOf(inCode);
    }

    @Test
    void theDefaultStoreDirectoryFollowsAFixedResourceIdBesideFlinksWorkingDirectory() {
        Configuration config = new Configuration();
        config.setString("sr3.ring.replication-factor", "2");
        assertThat(Sr3Options.nodeConfig(config).storeDirectory()).as("no resource id: the node's own default").isNull();
        config.setString("taskmanager.resource-id", "tm-3");
        config.setString("io.tmp.dirs", "/data/a,/data/b");
        assertThat(Sr3Options.nodeConfig(config).storeDirectory()).isEqualTo(Paths.get("/data/a/sr3-store-tm-3"));
        config.setString("process.taskmanager.working-dir", "/pv/flink");
        assertThat(Sr3Options.nodeConfig(config).storeDirectory()).isEqualTo(Paths.get("/pv/flink/sr3-store-tm-3"));
        config.setString("sr3.store.dir", "/explicit");
        assertThat(Sr3Options.nodeConfig(config).storeDirectory()).isEqualTo(Paths.get("/explicit"));
    }

    @Test
    void seedsAcceptSemicolonsCommasAndSpaces() {
        Configuration config = new Configuration();
        config.setString("sr3.ring.seeds", "tm-0.flink:6130, tm-1.flink:6130;tm-2.flink:6130");
        assertThat(Sr3Options.nodeConfig(config).seeds())
                .containsExactly("tm-0.flink:6130", "tm-1.flink:6130", "tm-2.flink:6130");
        config.setString("sr3.ring.seeds", "tm-0.flink:6130,tm-1.flink");
        assertThatThrownBy(() -> Sr3Options.nodeConfig(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("each seed must be host:port, got 'tm-1.flink'");
    }

    @Test
    void seedsFromConfigYamlAsAFlowListABlockListOrOneString(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        String[] forms = {
            "sr3.ring.seeds: [tm-0.flink:6130, 'tm-1.flink:6130', tm-2.flink:6130]\n",
            "sr3.ring.seeds:\n  - tm-0.flink:6130\n  - tm-1.flink:6130\n  - tm-2.flink:6130\n",
            "sr3.ring.seeds: tm-0.flink:6130;tm-1.flink:6130;tm-2.flink:6130\n",
            "sr3.ring.seeds: tm-0.flink:6130,tm-1.flink:6130, tm-2.flink:6130\n",
            "sr3:\n  ring:\n    seeds:\n      - tm-0.flink:6130\n      - tm-1.flink:6130,tm-2.flink:6130\n",
        };
        for (String yaml : forms) {
            Files.writeString(dir.resolve("config.yaml"), yaml);
            Configuration config = org.apache.flink.configuration.GlobalConfiguration.loadConfiguration(dir.toString());
            assertThat(Sr3Options.nodeConfig(config).seeds()).as("seeds of %s", yaml)
                    .containsExactly("tm-0.flink:6130", "tm-1.flink:6130", "tm-2.flink:6130");
        }
    }

    @Test
    void seedsKeepOrderDropDuplicatesAndEmptyEntriesAndAcceptIpv6InBrackets() {
        Configuration config = config("sr3.ring.seeds", " a:1 ;;a:1, ,[::1]:6130,10.0.0.1:65535,flink-tm_0.svc:6130,");
        assertThat(Sr3Options.nodeConfig(config).seeds())
                .containsExactly("a:1", "[::1]:6130", "10.0.0.1:65535", "flink-tm_0.svc:6130");
        assertThat(Sr3Options.nodeConfig(config("sr3.ring.seeds", "")).seeds()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "tm-1.flink           | no port",
        ":6130                | no host",
        "tm-1.flink:          | the port must be a number",
        "tm-1.flink:61x0      | the port must be a number",
        "tm-1.flink:0         | the port must be in 1..65535",
        "tm-1.flink:65536     | the port must be in 1..65535",
        "tm-1.flink:99999     | the port must be in 1..65535",
        "tm-1.flink:123456    | the port must be a number",
        "tm-1.flink:-1        | the port must be a number",
        "tm-1.flink:+6130     | the port must be a number",
        "tm 1.flink:6130      | the host may hold only",
        "tm-1.flink/x:6130    | the host may hold only",
        "-tm.flink:6130       | the host may hold only",
        "host:6130:6131       | the host may hold only",
        "::1:6130             | an IPv6 address must be in brackets",
        "[zz::1]:6130         | the host may hold only",
        "http://tm-1:6130     | the host may hold only",
        "tm-1.fl<NUL>ink:6130  | the host may hold only",
        "tm-1.flink:61<NUL>30  | the port must be a number",
    })
    void hostileSeedsAreRejectedNamingTheEntryAndTheRule(String seed, String rule) {
        String value = seed.replace("<NUL>", String.valueOf((char) 0));
        Configuration config = config("sr3.ring.seeds", "ok.flink:6130," + value);
        assertThatThrownBy(() -> Sr3Options.nodeConfig(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'sr3.ring.seeds'")
                .hasMessageContaining("each seed must be host:port")
                .hasMessageContaining(rule)
                .satisfies(e -> assertThat(e.getMessage()).as("no control characters in the message").doesNotContainPattern("\\p{Cntrl}"));
    }

    @Test
    void aVeryLongOrUnbalancedlyQuotedSeedListFailsWithTheOptionsMessage() {
        Configuration longHost = config("sr3.ring.seeds", "a".repeat(300) + ":6130");
        assertThatThrownBy(() -> Sr3Options.nodeConfig(longHost))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("host longer than 253 characters");
        Configuration unbalanced = config("sr3.ring.seeds", "a:6130;'b:6130");
        assertThatThrownBy(() -> Sr3Options.nodeConfig(unbalanced))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'sr3.ring.seeds'")
                .hasMessageContaining("expected host:port entries separated by ';' or ','");
    }
}
