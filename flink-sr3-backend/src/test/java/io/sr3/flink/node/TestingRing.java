package io.sr3.flink.node;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Several real ring nodes in this JVM, each with its own store directory and port, talking over
 * loopback sockets. Closing it stops every node it started.
 */
public final class TestingRing implements AutoCloseable {

    private static final long POLL_INTERVAL_NANOS = Duration.ofMillis(10).toNanos();

    private final List<RingNode> nodes = new ArrayList<>();

    private TestingRing() {}

    /** Starts {@code count} nodes; the first is the one the sr3:// file system of this JVM uses. */
    public static TestingRing start(int count, NodeConfig config, Path root) throws IOException {
        TestingRing ring = new TestingRing();
        try {
            for (int i = 0; i < count; i++) {
                ring.nodes.add(RingNode.start(config.withPortAndStore(0, root.resolve("node-" + i))));
            }
            ring.awaitMembers(count);
        } catch (IOException | RuntimeException e) {
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

    public RingNode node(int index) {
        return nodes.get(index);
    }

    public List<RingNode> nodes() {
        return nodes;
    }

    /** Waits until every running node sees {@code size} members. */
    public void awaitMembers(int size) {
        awaitCondition(() -> nodes.stream().filter(RingNode::isRunning)
                .allMatch(n -> n.membership().members().size() == size), "every node to see " + size + " members");
    }

    /** Polls a condition with a deadline of 20 s. */
    public static void awaitCondition(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out waiting for " + what);
            }
            LockSupport.parkNanos(POLL_INTERVAL_NANOS);
            if (Thread.interrupted()) {
                throw new AssertionError("Interrupted waiting for " + what);
            }
        }
    }

    @Override
    public void close() {
        for (RingNode node : nodes) {
            node.close();
        }
    }
}
