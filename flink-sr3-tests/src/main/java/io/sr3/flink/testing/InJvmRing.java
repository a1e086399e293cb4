package io.sr3.flink.testing;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.NodeMetrics;
import io.sr3.flink.node.RingNode;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.util.FileUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Several real sr3 ring nodes in this JVM, each with its own store directory and an ephemeral
 * port, talking over loopback: the ring of the MiniCluster tests, the demo and the benchmarks.
 *
 * <p>The first node started is the oldest, so it serves the {@code sr3://} file system of the
 * whole JVM ({@link LocalRing#current()}) until it stops; then the next oldest takes over. Because
 * writes put the writer's own node first, the serving node holds a replica of every block.
 *
 * <p>{@link #start} returns once every node sees all the others. Nodes that {@link LocalRing}
 * started on its own (a late file system call after an earlier ring closed) would serve this ring's
 * jobs instead of its oldest node, so {@link #start} and {@link #close} stop them.
 *
 * <p>The backend module's own tests use {@code TestingRing} instead: they are built before this
 * module and cannot depend on it.
 */
@NotThreadSafe
public final class InJvmRing implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InJvmRing.class);

    /** Loopback membership settles in about one failure-detector round; this allows for a loaded machine. */
    static final Duration MEMBERSHIP_TIMEOUT = Duration.ofSeconds(30);

    private final List<RingNode> nodes = new ArrayList<>();
    private final Path baseDirectory;

    private InJvmRing(Path baseDirectory) {
        this.baseDirectory = baseDirectory;
    }

    /**
     * Starts {@code count} nodes configured from the {@code sr3.*} keys of {@code flinkConfig},
     * on ephemeral ports, storing under {@code baseDirectory/node-<i>}, and waits until every node
     * sees all of them. On failure the nodes started so far are stopped.
     */
    public static InJvmRing start(ReadableConfig flinkConfig, int count, Path baseDirectory) throws IOException {
        if (count < 1) {
            throw new IllegalArgumentException("A ring needs at least one node, asked for " + count);
        }
        closeStrayNodes();
        NodeConfig template = Sr3Options.nodeConfig(flinkConfig);
        InJvmRing ring = new InJvmRing(baseDirectory);
        try {
            for (int i = 0; i < count; i++) {
                Path store = Files.createDirectories(baseDirectory.resolve("node-" + (i + 1)));
                ring.nodes.add(RingNode.start(template.withPortAndStore(0, store)));
            }
            ring.awaitMembers(count);
        } catch (IOException | RuntimeException | Error e) {
            ring.close();
            throw e;
        }
        return ring;
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

    /** "node-1 (id)", "node-2 (id)", ... in start order (oldest first). */
    public String name(int index) {
        return shortName(index) + " (" + nodes.get(index).self().id() + ")";
    }

    /** "node-1", "node-2", ... in start order. */
    public String shortName(int index) {
        return "node-" + (index + 1);
    }

    /** Waits until every running node sees {@code size} members. */
    public void awaitMembers(int size) {
        Deadline.poll("every running ring node to see " + size + " members", MEMBERSHIP_TIMEOUT,
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

    /** Stops every node (and any stray one), then deletes the store directories. */
    @Override
    public void close() throws IOException {
        for (RingNode node : nodes) {
            node.close();
        }
        closeStrayNodes();
        FileUtils.deleteDirectory(baseDirectory.toFile());
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
