package io.sr3.flink.cluster;

import io.sr3.flink.Sr3RingNodeMain;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.ring.SeedAddresses;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sr3.ring.seeds} as one DNS name with several addresses, as the Kubernetes examples use a
 * headless Service ({@code deploy/kubernetes/}): ring node processes ({@link Sr3RingNodeMain}) on
 * 127.0.0.1, 127.0.0.2 and 127.0.0.3 (all of 127/8 is loopback on Linux), on the same ring port,
 * each configured with the single seed {@code sr3-seeds.test:<port>} and otherwise as the
 * examples' TaskManagers (their own address as {@code sr3.ring.host}, a shared secret, a cluster
 * id), find each other; a fourth node that appears in the name later is found by the others.
 *
 * <p>The name is served by the JDK's hosts-file resolver: every node JVM runs with
 * {@code -Djdk.net.hosts.file=<file>}, one line per address ({@code 127.0.0.1 sr3-seeds.test}),
 * and {@code InetAddress.getAllByName} returns every address listed for the name, in file order.
 * The JDK reads that file again at every lookup; what would keep an old answer is
 * {@code InetAddress}'s own cache ({@code networkaddress.cache.ttl}, 30 s by default), which
 * {@code -Dsun.net.inetaddr.ttl=0} turns off, as a short DNS TTL would in a cluster.
 *
 * <p>The fourth node is seeded only with its own address, so it dials nobody: only the others
 * resolving the name again ({@link SeedAddresses} at every probe round) after the file changed can
 * find it. That is the part of the test that fails if the name counted only as its first address:
 * the first three nodes would still find each other, because the second and third dial the first
 * and learn the rest from its answer.
 *
 * <p>The nodes bind only their loopback addresses, on a port free on all four, and work in their
 * own directory under {@code target/process-clusters} (their logs stay there; their stores are
 * deleted). Every node started is stopped by its process handle after the test.
 */
class Sr3DnsSeedsITCase {

    private static final String SEED_NAME = "sr3-seeds.test";
    private static final List<String> HOSTS = List.of("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4");
    private static final String SECRET = "dns-seeds-test-secret";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    /** Several failure-detector rounds (500 ms by default) on a loaded 2-core machine. */
    private static final Duration RING_TIMEOUT = Duration.ofSeconds(60);

    private final Path workDir = ProcessClusterTestSupport.clusterDir(getClass().getSimpleName());
    private final List<NodeProcess> nodes = new ArrayList<>();
    private RingStatsClient stats;

    @AfterEach
    void stopNodes() throws InterruptedException {
        if (stats != null) {
            stats.close();
        }
        for (NodeProcess node : nodes) {
            node.process().destroy(); // SIGTERM to this PID: the node's shutdown hook closes it
        }
        for (NodeProcess node : nodes) {
            if (!node.process().waitFor(10, TimeUnit.SECONDS)) {
                node.process().destroyForcibly();
                node.process().waitFor(30, TimeUnit.SECONDS);
            }
            FileUtils.deleteDirectoryQuietly(node.directory().resolve("store").toFile());
            FileUtils.deleteDirectoryQuietly(node.directory().resolve("tmp").toFile());
        }
    }

    @Test
    void nodesSeededWithOneNameFindEveryAddressItResolvesToAndLaterOnes() throws Exception {
        int ringPort = FreePorts.freePort(HOSTS);
        Files.createDirectories(workDir);
        Path hostsFile = workDir.resolve("hosts");
        Path secretFile = Files.writeString(workDir.resolve("secret"), SECRET + "\n");
        List<String> firstThree = HOSTS.subList(0, 3);
        writeHostsFile(hostsFile, firstThree);
        stats = new RingStatsClient(TransportSecurity.ofSecret(SECRET), Duration.ofSeconds(2));

        String seed = SEED_NAME + ":" + ringPort;
        for (String host : firstThree) {
            nodes.add(startNode(host, ringPort, seed, hostsFile, secretFile));
        }
        for (NodeProcess node : nodes) {
            awaitReady(node);
        }
        awaitRingSize(3);

        writeHostsFile(hostsFile, HOSTS);
        String fourth = HOSTS.get(3);
        NodeProcess late = startNode(fourth, ringPort, fourth + ":" + ringPort, hostsFile, secretFile);
        nodes.add(late);
        awaitReady(late);
        awaitRingSize(4);
    }

    /** Replaces the file at once (a rename), so that a node never reads half of it. */
    private static void writeHostsFile(Path file, List<String> addresses) throws IOException {
        String content = addresses.stream().map(a -> a + " " + SEED_NAME + "\n").collect(Collectors.joining());
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, content);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private NodeProcess startNode(String host, int ringPort, String seeds, Path hostsFile, Path secretFile)
            throws IOException {
        Path dir = Files.createDirectories(workDir.resolve("node-" + host));
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        ClusterConfigWriter.writeLogConfig(dir.resolve("log4j2.properties"), dir.resolve("node.log"));
        List<String> command = List.of(
                ProcessLauncher.javaBinary(),
                "-Xmx128m",
                "-Djava.io.tmpdir=" + tmp,
                "-Djdk.net.hosts.file=" + hostsFile,
                "-Dsun.net.inetaddr.ttl=0",
                "-Dlog4j2.configurationFile=" + dir.resolve("log4j2.properties").toUri(),
                "-cp", ProcessLauncher.classpath(),
                Sr3RingNodeMain.class.getName(),
                "--secret-file", secretFile.toString(),
                "sr3.ring.seeds=" + seeds,
                "sr3.ring.host=" + host,
                "sr3.ring.port=" + ringPort,
                "sr3.ring.replication-factor=2",
                "sr3.ring.cluster-id=sr3-dns-seeds-test",
                "sr3.store.dir=" + dir.resolve("store"));
        // Standard input stays an open pipe: the node runs until it closes or the node is stopped.
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(dir.resolve("stdout.txt").toFile())
                .redirectError(dir.resolve("stderr.txt").toFile());
        builder.environment().remove(Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE);
        return new NodeProcess(host + ":" + ringPort, builder.start(), dir);
    }

    /** Waits for the node's {@code READY <host:port>} line; fails at once if the process exits. */
    private static void awaitReady(NodeProcess node) {
        String ready = "READY " + node.address();
        Deadline.poll(node + " to print '" + ready + "'", START_TIMEOUT, () -> {
            if (!node.process().isAlive()) {
                throw new IllegalStateException(node + " exited with " + node.process().exitValue() + ": "
                        + read(node.directory().resolve("stderr.txt")));
            }
            return read(node.directory().resolve("stdout.txt")).contains(ready);
        });
    }

    /** Waits until every node answers STATS and sees a ring of exactly {@code size} storage nodes. */
    private void awaitRingSize(int size) {
        Deadline.poll("every ring node to see " + size + " members", RING_TIMEOUT, () -> {
            Map<String, Map<String, Long>> all = ringStats();
            return all.size() == nodes.size() && all.values().stream().allMatch(s -> s.get("ringSize") == size);
        }, () -> "ring sizes " + ringSizes() + "; logs in " + workDir);
        assertThat(ringStats().values()).as("ring size seen by every node").hasSize(nodes.size())
                .allSatisfy(s -> assertThat(s.get("ringSize")).isEqualTo((long) size));
    }

    /** STATS of every node by address; nodes that do not answer are left out. */
    private Map<String, Map<String, Long>> ringStats() {
        Map<String, Map<String, Long>> all = new LinkedHashMap<>();
        for (NodeProcess node : nodes) {
            try {
                all.put(node.address(), stats.stats(node.address()));
            } catch (IOException e) {
                // not up yet
            }
        }
        return all;
    }

    private Map<String, Long> ringSizes() {
        Map<String, Long> sizes = new LinkedHashMap<>();
        ringStats().forEach((address, s) -> sizes.put(address, s.get("ringSize")));
        return sizes;
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** One ring node process this test started. */
    private record NodeProcess(String address, Process process, Path directory) {

        @Override
        public String toString() {
            return "ring node " + address + " (pid " + process.pid() + ")";
        }
    }
}
