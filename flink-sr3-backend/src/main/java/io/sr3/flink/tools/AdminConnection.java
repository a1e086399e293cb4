package io.sr3.flink.tools;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.Sr3RingNodeMain;
import io.sr3.flink.Sr3SecurityOptions;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingRole;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.ring.Member;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.plugin.PluginUtils;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The admin tool's client of the ring: the cluster's configuration and credentials as the command
 * line gives them, Flink's file systems initialized with it, and this JVM's ring node started as a
 * storage-less client that has learned every member.
 */
@NotThreadSafe
final class AdminConnection implements AutoCloseable {

    /** The environment variable the secret may come in, as for {@link Sr3RingNodeMain}. */
    static final String SECRET_VARIABLE = Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE;
    static final String KEYSTORE_PASSWORD_VARIABLE = "SR3_KEYSTORE_PASSWORD";
    static final String TRUSTSTORE_PASSWORD_VARIABLE = "SR3_TRUSTSTORE_PASSWORD";

    private final Configuration configuration;
    private final NodeConfig nodeConfig;
    private final RingNode node;
    private final RingStatsClient stats;
    private final Path scratchStore;

    private AdminConnection(Configuration configuration, NodeConfig nodeConfig, RingNode node, RingStatsClient stats,
            Path scratchStore) {
        this.configuration = configuration;
        this.nodeConfig = nodeConfig;
        this.node = node;
        this.stats = stats;
        this.scratchStore = scratchStore;
    }

    /**
     * The configuration the arguments describe: {@code --conf-dir}'s {@code config.yaml}, then
     * {@code -D} settings, seeds, the secret and the TLS stores; then what makes this process a
     * client: {@code sr3.ring.role: client}, any free port on {@code 127.0.0.1} (no peer ever
     * connects to a client) unless {@code -Dsr3.ring.host} says otherwise, and a scratch store
     * directory of its own, so that it never touches a TaskManager's store even with that
     * TaskManager's configuration.
     *
     * @throws IllegalArgumentException for a missing or doubly given credential
     * @throws IOException if a credential file cannot be read
     */
    static Configuration configuration(AdminArguments arguments, Map<String, String> environment, Path scratchStore)
            throws IOException {
        Configuration config = arguments.confDir() == null
                ? new Configuration()
                : GlobalConfiguration.loadConfiguration(requireDirectory(arguments.confDir()).toString());
        arguments.properties().forEach(config::setString);
        if (arguments.seeds() != null) {
            config.setString(Sr3Options.RING_SEEDS.key(), arguments.seeds());
        }
        List<String> secretArgs = new ArrayList<>();
        if (arguments.secretFile() != null) {
            secretArgs.addAll(List.of("--secret-file", arguments.secretFile().toString()));
        }
        // Sr3RingNodeMain's rules: the file or the variable, never both, never empty.
        config.addAll(Sr3RingNodeMain.configuration(secretArgs, environment));
        if (arguments.keystore() != null || arguments.truststore() != null) {
            if (arguments.keystore() == null || arguments.truststore() == null) {
                throw new IllegalArgumentException("Mutual TLS needs both --keystore (this client's certificate) and "
                        + "--truststore (the ring's CA)");
            }
            String keystorePassword = password(arguments.keystorePasswordFile(), environment, KEYSTORE_PASSWORD_VARIABLE,
                    "--keystore-password-file");
            config.set(Sr3SecurityOptions.SSL_ENABLED, true);
            config.set(Sr3SecurityOptions.SSL_KEYSTORE, arguments.keystore().toString());
            config.set(Sr3SecurityOptions.SSL_KEYSTORE_PASSWORD, keystorePassword);
            config.set(Sr3SecurityOptions.SSL_KEY_PASSWORD, keystorePassword);
            config.set(Sr3SecurityOptions.SSL_TRUSTSTORE, arguments.truststore().toString());
            config.set(Sr3SecurityOptions.SSL_TRUSTSTORE_PASSWORD, password(arguments.truststorePasswordFile(),
                    environment, TRUSTSTORE_PASSWORD_VARIABLE, "--truststore-password-file"));
        }
        config.set(Sr3Options.RING_ROLE, RingRole.CLIENT);
        config.set(Sr3Options.RING_PORT, "0");
        config.set(Sr3Options.RING_HOST, arguments.properties().getOrDefault(Sr3Options.RING_HOST.key(), "127.0.0.1"));
        config.set(Sr3Options.STORE_DIR, scratchStore.toString());
        config.removeConfig(Sr3Options.STORE_MAX_SIZE);
        return config;
    }

    /**
     * Connects: validates the configuration like a Flink process would, initializes Flink's file
     * systems (plugins from {@code FLINK_PLUGINS_DIR}, so {@code cp} reaches {@code s3://} or
     * {@code hdfs://}), starts the client node and waits until it sees every member the members see.
     *
     * @throws IllegalConfigurationException if an option is invalid or no seed is given
     */
    static AdminConnection open(AdminArguments arguments, Map<String, String> environment, PrintStream err)
            throws IOException {
        Path scratch = Files.createTempDirectory("sr3-admin-");
        try {
            Configuration config = configuration(arguments, environment, scratch);
            NodeConfig nodeConfig = Sr3Options.nodeConfig(config);
            if (nodeConfig.seeds().isEmpty()) {
                throw new IllegalConfigurationException("No ring to connect to: give --seeds host:port[,host:port...] "
                        + "or --conf-dir of a Flink configuration that sets " + Sr3Options.RING_SEEDS.key());
            }
            FileSystem.initialize(config, PluginUtils.createPluginManagerFromRootFolder(config));
            LocalRing.offerConfig(nodeConfig);
            RingNode node = LocalRing.current();
            if (!node.isClient()) {
                node.close();
                throw new IllegalStateException("This JVM's ring node started as a storage node; the admin tool only "
                        + "ever runs as a client");
            }
            RingStatsClient stats = new RingStatsClient(nodeConfig.security(), nodeConfig.requestTimeout());
            AdminConnection connection = new AdminConnection(config, nodeConfig, node, stats, scratch);
            connection.awaitMembers(err);
            return connection;
        } catch (IOException | RuntimeException e) {
            deleteRecursively(scratch);
            throw e;
        }
    }

    /**
     * Waits until this client knows as many storage members as the largest ring any member reports
     * (members learned from a seed's answer join one probe round later), for at most two failure
     * timeouts; a warning says when the views still differ then.
     */
    private void awaitMembers(PrintStream err) throws IOException {
        Duration patience = nodeConfig.failureTimeout().multipliedBy(2);
        long deadline = System.nanoTime() + patience.toNanos();
        long largest = 0;
        while (true) {
            List<Member> members = node.membership().members();
            largest = members.size();
            for (Member member : members) {
                try {
                    largest = Math.max(largest, stats.stats(member.id()).getOrDefault("ringSize", 0L));
                } catch (IOException e) {
                    // An unreachable member is reported by the command itself.
                }
            }
            if (!members.isEmpty() && members.size() >= largest) {
                return;
            }
            if (System.nanoTime() > deadline) {
                if (members.isEmpty()) {
                    throw new IOException("No storage member of the ring answered within " + patience.toMillis()
                            + " ms through the seeds " + nodeConfig.seeds() + ": are they up and reachable from "
                            + "here, and are the credentials the cluster's (--secret-file, --keystore/--truststore, "
                            + "--conf-dir)?");
                }
                err.printf("sr3: warning: this client sees %d storage members, a member reports a ring of %d%n",
                        members.size(), largest);
                return;
            }
            try {
                Thread.sleep(Math.max(10, nodeConfig.pingInterval().toMillis() / 2)); // the next probe round
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("Interrupted while joining the ring");
            }
        }
    }

    Configuration configuration() {
        return configuration;
    }

    NodeConfig nodeConfig() {
        return nodeConfig;
    }

    RingNode node() {
        return node;
    }

    RingStatsClient stats() {
        return stats;
    }

    @Override
    public void close() {
        stats.close();
        node.close();
        deleteRecursively(scratchStore);
    }

    private static Path requireDirectory(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--conf-dir " + dir + " is not a directory");
        }
        return dir;
    }

    /** A password from its file (one trailing line break dropped) or its environment variable. */
    private static String password(Path file, Map<String, String> environment, String variable, String option)
            throws IOException {
        String fromEnvironment = environment.get(variable);
        if (file != null && fromEnvironment != null) {
            throw new IllegalArgumentException("The password is given twice, in " + option + " and in " + variable);
        }
        String password = fromEnvironment;
        if (file != null) {
            password = Files.readString(file, StandardCharsets.UTF_8).replaceFirst("\r?\n$", "");
        }
        if (password == null || password.isEmpty()) {
            throw new IllegalArgumentException("Mutual TLS needs the store's password: " + option + " PATH or the "
                    + "environment variable " + variable);
        }
        return password;
    }

    private static void deleteRecursively(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // A scratch directory under the temp dir; nothing was ever stored in it.
        }
    }
}
