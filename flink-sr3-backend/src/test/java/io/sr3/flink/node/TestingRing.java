package io.sr3.flink.node;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.testing.Deadline;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.util.FileUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Several real ring nodes in this JVM, each with its own store directory and an ephemeral port,
 * talking over loopback sockets: the in-JVM ring of the unit tests, the MiniCluster tests, the
 * demo and the benchmarks (which get it from this module's test-jar).
 *
 * <p>The first node started is the oldest, so it serves the {@code sr3://} file system of the
 * whole JVM ({@link LocalRing#current()}) until it stops; then the next oldest takes over. Because
 * writes put the writer's own node first, the serving node holds a replica of every block.
 *
 * <p>{@link #start} returns once every node sees all the others. A ring started from a Flink
 * configuration ({@link #start(ReadableConfig, int, Path)}) serves a MiniCluster's jobs: nodes
 * that {@link LocalRing} started on its own (a late file system call after an earlier ring closed)
 * would serve them instead of its oldest node, so it stops those at its start and its close, and
 * deletes its store directories when it closes. Closing any ring stops every node it started.
 */
@NotThreadSafe
public final class TestingRing implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TestingRing.class);

    /** How long a test waits for the ring's membership, or anything else a node does in the background. */
    public static final Duration AWAIT_TIMEOUT = Duration.ofSeconds(30);

    private final List<RingNode> nodes = new ArrayList<>();
    /** Set for a ring that serves a MiniCluster: its directory and any stray node go at its close. */
    @Nullable private final Path ownedDirectory;

    private TestingRing(@Nullable Path ownedDirectory) {
        this.ownedDirectory = ownedDirectory;
    }

    /** Starts {@code count} nodes storing under {@code root/node-<i>}; the first is the one the sr3:// file system of this JVM uses. */
    public static TestingRing start(int count, NodeConfig config, Path root) throws IOException {
        return start(count, config, root, null);
    }

    /**
     * Starts {@code count} nodes configured from the {@code sr3.*} keys of {@code flinkConfig}, as
     * a MiniCluster's ring, storing under {@code baseDirectory/node-<i>}; stops stray nodes first.
     */
    public static TestingRing start(ReadableConfig flinkConfig, int count, Path baseDirectory) throws IOException {
        closeStrayNodes();
        return start(count, Sr3Options.nodeConfig(flinkConfig), baseDirectory, baseDirectory);
    }

    private static TestingRing start(int count, NodeConfig config, Path root, @Nullable Path ownedDirectory)
            throws IOException {
        if (count < 1) {
            throw new IllegalArgumentException("A ring needs at least one node, asked for " + count);
        }
        TestingRing ring = new TestingRing(ownedDirectory);
        try {
            for (int i = 0; i < count; i++) {
                Path store = Files.createDirectories(root.resolve("node-" + i));
                ring.nodes.add(RingNode.start(config.withPortAndStore(0, store)));
            }
            ring.awaitMembers(count);
        } catch (IOException | RuntimeException | Error e) {
            ring.close();
            throw e;
        }
        return ring;
    }

    /** Fast failure detection, repair without delay, small blocks and frames: many blocks per file in tests. */
    public static NodeConfig testConfig() {
        NodeConfig d = NodeConfig.defaults();
        NodeConfig config = new NodeConfig(d.host(), List.of(0), List.of(), 2, "", 16, null, false, null,
                256 * 1024, Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ofSeconds(1), 64 * 1024);
        return config.withDurability(config.durability().withRepairDelay(Duration.ZERO));
    }

    /** Blocks of 1 MiB in {@link #testConfig}: each transfer of one is a bandwidth sample for the link estimates. */
    public static NodeConfig sampleBlockConfig() {
        return testConfig().withBlockAndFrameSize(SAMPLE_BLOCK, 2 * SAMPLE_BLOCK);
    }

    /** The block size of {@link #sampleBlockConfig}: {@code LinkEstimator.MIN_SAMPLE_BYTES}. */
    public static final int SAMPLE_BLOCK = 1024 * 1024;

    /**
     * Stops node {@code index} and starts it again on the same port with the same store: a
     * process restart that keeps its disk. Returns the new node.
     */
    public RingNode restart(int index) throws IOException {
        return restart(index, nodes.get(index).self().port());
    }

    /** Stops node {@code index} and starts it again on any free port with the same store: a pod back with a new address. */
    public RingNode restartOnNewPort(int index) throws IOException {
        return restart(index, 0);
    }

    private RingNode restart(int index, int port) throws IOException {
        RingNode old = nodes.get(index);
        old.close();
        RingNode restarted = RingNode.start(old.config().withPortAndStore(port, old.store().directory()));
        nodes.set(index, restarted);
        return restarted;
    }

    public int size() {
        return nodes.size();
    }

    public RingNode node(int index) {
        return nodes.get(index);
    }

    /** Every node started, oldest (the file system's) first, stopped ones included. */
    public List<RingNode> nodes() {
        return Collections.unmodifiableList(nodes);
    }

    /** "node-0 (id)", "node-1 (id)", ... in start order (oldest first). */
    public String name(int index) {
        return shortName(index) + " (" + nodes.get(index).self().id() + ")";
    }

    /** "node-0", "node-1", ... in start order, as their store directories are named. */
    public String shortName(int index) {
        return "node-" + index;
    }

    /** Waits until every running node sees {@code size} members. */
    public void awaitMembers(int size) {
        Deadline.poll("every running ring node to see " + size + " members", AWAIT_TIMEOUT,
                () -> nodes.stream().filter(RingNode::isRunning).allMatch(n -> n.membership().members().size() == size),
                () -> nodes.stream().filter(RingNode::isRunning).map(n -> n.membership().members().size()).toList()
                        + " members seen");
    }

    /** Bytes in each node's block store (replicas and manifests), in start order; stopped nodes included. */
    public long[] bytesStoredPerNode() {
        long[] bytes = new long[nodes.size()];
        for (int i = 0; i < nodes.size(); i++) {
            bytes[i] = nodes.get(i).store().bytesStored();
        }
        return bytes;
    }

    /** Sum of {@link #bytesStoredPerNode()}: every replica counted. */
    public long bytesStored() {
        long sum = 0;
        for (long b : bytesStoredPerNode()) {
            sum += b;
        }
        return sum;
    }

    /** Index of the running node whose store holds the most bytes. */
    public int indexHoldingMost() {
        int best = -1;
        long most = -1;
        for (int i = 0; i < nodes.size(); i++) {
            long b = nodes.get(i).store().bytesStored();
            if (nodes.get(i).isRunning() && b > most) {
                most = b;
                best = i;
            }
        }
        if (best < 0) {
            throw new IllegalStateException("No ring node is running");
        }
        return best;
    }

    /** A copy of one node's counters, so that later changes can be told apart. */
    public static MetricsSnapshot metrics(RingNode node) {
        NodeMetrics m = node.metrics();
        return new MetricsSnapshot(m.bytesWritten.get(), m.bytesRead.get(), m.bytesReadRemote.get(),
                m.replicaFallbacks.get(), m.underReplicatedWrites.get());
    }

    /** Stops every node; a MiniCluster's ring also stops any stray one and deletes its store directories. */
    @Override
    public void close() {
        for (RingNode node : nodes) {
            node.close();
        }
        if (ownedDirectory != null) {
            closeStrayNodes();
            try {
                FileUtils.deleteDirectory(ownedDirectory.toFile());
            } catch (IOException e) {
                throw new UncheckedIOException("Could not delete the ring's store directories " + ownedDirectory, e);
            }
        }
    }

    private static void closeStrayNodes() {
        for (RingNode stray : LocalRing.nodes()) {
            LOG.warn("Closing ring node {} left over by an earlier ring", stray);
            stray.close();
        }
    }

    /** Counters of one ring node at one moment. */
    public record MetricsSnapshot(long bytesWritten, long bytesRead, long bytesReadRemote, long replicaFallbacks,
            long underReplicatedWrites) {

        public MetricsSnapshot minus(MetricsSnapshot earlier) {
            return new MetricsSnapshot(bytesWritten - earlier.bytesWritten, bytesRead - earlier.bytesRead,
                    bytesReadRemote - earlier.bytesReadRemote, replicaFallbacks - earlier.replicaFallbacks,
                    underReplicatedWrites - earlier.underReplicatedWrites);
        }
    }
}
