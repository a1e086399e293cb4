package io.sr3.flink.harness;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.NodeMetrics;
import io.sr3.flink.node.RingNode;
import org.apache.flink.configuration.ReadableConfig;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Several sr3 ring nodes in this JVM, each with its own store directory, talking over loopback.
 *
 * <p>The first node started is the oldest, so it serves the {@code sr3://} file system of the
 * whole MiniCluster ({@code LocalRing.current()}) until it stops; then the next oldest takes over.
 * Because writes put the writer's own node first, the serving node holds a replica of every block.
 */
@NotThreadSafe
public final class InJvmRing implements AutoCloseable {

    private final List<RingNode> nodes = new ArrayList<>();
    private final List<String> names = new ArrayList<>();
    private final Path baseDirectory;

    private InJvmRing(Path baseDirectory) {
        this.baseDirectory = baseDirectory;
    }

    /**
     * Starts {@code count} nodes configured from the {@code sr3.*} keys of {@code flinkConfig},
     * on ephemeral ports, storing under {@code baseDirectory/node-<i>}.
     */
    public static InJvmRing start(ReadableConfig flinkConfig, int count, Path baseDirectory) throws IOException {
        if (count < 1) {
            throw new IllegalArgumentException("A ring needs at least one node, asked for " + count);
        }
        NodeConfig template = Sr3Options.nodeConfig(flinkConfig);
        InJvmRing ring = new InJvmRing(baseDirectory);
        try {
            for (int i = 0; i < count; i++) {
                Path store = baseDirectory.resolve("node-" + (i + 1));
                Files.createDirectories(store);
                ring.nodes.add(RingNode.start(template.withPortAndStore(0, store)));
                ring.names.add("node-" + (i + 1));
            }
        } catch (IOException | RuntimeException e) {
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

    /** "node-1", "node-2", ... in start order (oldest first). */
    public String name(int index) {
        return names.get(index) + " (" + nodes.get(index).self().id() + ")";
    }

    public String shortName(int index) {
        return names.get(index);
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

    /** Stops every node and deletes the store directories. */
    @Override
    public void close() throws IOException {
        for (RingNode node : nodes) {
            node.close();
        }
        deleteRecursively(baseDirectory);
    }

    /** Deletes a directory tree; a missing one is fine. */
    public static void deleteRecursively(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
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
