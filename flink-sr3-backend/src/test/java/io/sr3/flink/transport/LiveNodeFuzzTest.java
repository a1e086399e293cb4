package io.sr3.flink.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.transport.HostileConnection.Attack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and mutated bytes through a live ring node's socket, from raw connections: junk before
 * the challenge, a plausible header followed by junk, a mutated AUTH frame, and, after a real
 * handshake, mutated requests with valid MACs and mutated signed frames. For every connection the
 * server must answer with well-formed frames and close it, or answer every request, within its
 * deadlines; afterwards the node still serves a well-behaved client, wrote nothing outside its
 * store, and its heap holds no more than before.
 *
 * <p>Connection {@code i} draws its bytes from {@code new Random(Fuzzer.SEED + i)}: a failure
 * names the seed, the connection and the bytes it sent (the handshake nonces differ per run).
 */
class LiveNodeFuzzTest {

    private static final String SECRET = "fuzz-ring-secret";
    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);
    /** What a loaded 2-core machine may add to a server-side deadline before the test calls it a hang. */
    private static final Duration SLACK = Duration.ofSeconds(5);
    private static final int MAX_CONNECTIONS = 300;
    private static final Duration MAX_TIME = Duration.ofSeconds(30);
    private static final int PARALLEL_CONNECTIONS = 12;
    /** Retained heap growth that would mean connections, frames or requests are kept after they ended. */
    private static final long HEAP_GROWTH_BOUND = 64L << 20;
    private static final int MAX_REPORTED_FAILURES = 5;

    @TempDir Path root;

    @Test
    void everyHostileConnectionIsAnsweredOrClosedAndTheNodeStillServes() throws Exception {
        NodeConfig config = TestingRing.testConfig().withSecret(SECRET);
        config = config.withTransport(config.security(), new TransportLimits(HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, 1024, 128));
        try (TestingRing ring = TestingRing.start(1, config, root)) {
            RingNode node = ring.node(0);
            long heapBefore = usedHeapAfterGc();
            Tally tally = new Tally(heapBefore);
            long start = System.nanoTime();
            runConnections(new HostileConnection.Target(node, SECRET, HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, SLACK), tally);
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            assertStillServes(node);
            long heapAfter = usedHeapAfterGc();

            int total = 0;
            for (Attack attack : Attack.values()) {
                total += tally.connections.get(attack).get();
                System.out.printf("[fuzz] live node socket, %s: %d connections, %d bytes sent%n", attack,
                        tally.connections.get(attack).get(), tally.bytesSent.get(attack).get());
            }
            System.out.printf("[fuzz] live node socket: %d connections in %d ms, %d requests answered, %d handshakes "
                    + "refused (%d connections sent less than a header); heap %d MiB before, high-water %d MiB, %d MiB "
                    + "after; seed %d%n", total, elapsed.toMillis(), tally.answers.get(), node.refusedHandshakes(),
                    tally.stalled.get(), heapBefore >> 20, tally.heapHighWater.get() >> 20, heapAfter >> 20, Fuzzer.SEED);

            assertThat(tally.failures).as("connections the node did not answer or close in time (%d in all), replay "
                    + "with -D%s=%d%n%s", tally.failureCount.get(), Fuzzer.SEED_PROPERTY, Fuzzer.SEED,
                    String.join("\n", tally.failures)).isEmpty();
            assertThat(total).as("connections tried").isGreaterThanOrEqualTo(MAX_CONNECTIONS / 3);
            // Less than a header can only be ended by a deadline, and the handshake deadline comes before the idle one.
            assertThat(tally.stalled.get()).as("connections that sent less than a frame header").isPositive();
            assertThat(node.refusedHandshakes()).as("handshakes refused, at least one per connection that sent less "
                    + "than a header").isGreaterThanOrEqualTo(tally.stalled.get());
            assertThat(heapAfter - heapBefore).as("heap retained after %d hostile connections", total)
                    .isLessThan(HEAP_GROWTH_BOUND);
            assertNothingOutside(node.store().directory());
        }
    }

    /** Runs up to {@link #MAX_CONNECTIONS} connections, {@link #PARALLEL_CONNECTIONS} at a time, for {@link #MAX_TIME}. */
    private static void runConnections(HostileConnection.Target target, Tally tally) throws InterruptedException {
        long stopStarting = System.nanoTime() + MAX_TIME.toNanos();
        ExecutorService peers = Executors.newFixedThreadPool(PARALLEL_CONNECTIONS);
        try {
            for (int i = 0; i < MAX_CONNECTIONS; i++) {
                int index = i;
                Attack attack = Attack.values()[i % Attack.values().length];
                peers.execute(() -> {
                    if (System.nanoTime() < stopStarting && tally.failureCount.get() < MAX_REPORTED_FAILURES) {
                        tally.run(index, new HostileConnection(target, attack, new Random(Fuzzer.SEED + index)));
                    }
                });
            }
            peers.shutdown();
            // Every connection ends within its deadlines; the last ones start just before MAX_TIME.
            Duration lastOnes = IDLE_TIMEOUT.plus(SLACK).plus(target.node().config().requestTimeout()).multipliedBy(3);
            assertThat(peers.awaitTermination(MAX_TIME.plus(lastOnes).toMillis(), TimeUnit.MILLISECONDS))
                    .as("every hostile connection ended").isTrue();
        } finally {
            peers.shutdownNow();
        }
    }

    /** What the connections did, counted from the threads that run them. */
    private static final class Tally {
        final Map<Attack, AtomicInteger> connections = new EnumMap<>(Attack.class);
        final Map<Attack, AtomicLong> bytesSent = new EnumMap<>(Attack.class);
        final AtomicInteger answers = new AtomicInteger();
        final AtomicInteger stalled = new AtomicInteger();
        final AtomicLong heapHighWater;
        final Queue<String> failures = new ConcurrentLinkedQueue<>();
        final AtomicInteger failureCount = new AtomicInteger();

        Tally(long heapBefore) {
            heapHighWater = new AtomicLong(heapBefore);
            for (Attack attack : Attack.values()) {
                connections.put(attack, new AtomicInteger());
                bytesSent.put(attack, new AtomicLong());
            }
        }

        /** Runs connection {@code index} and counts what it did; a failure is kept with the bytes it sent. */
        void run(int index, HostileConnection connection) {
            try {
                connection.run();
                answers.addAndGet(connection.answers);
                stalled.addAndGet(connection.stalls ? 1 : 0);
            } catch (Throwable t) {
                if (failureCount.incrementAndGet() <= MAX_REPORTED_FAILURES) {
                    failures.add(String.format("  connection #%d (%s): %s%n    sent: %s", index, connection.attack, t,
                            Mutator.hex(connection.sent.toByteArray())));
                }
            } finally {
                connections.get(connection.attack).incrementAndGet();
                bytesSent.get(connection.attack).addAndGet(connection.sent.size());
                heapHighWater.accumulateAndGet(usedHeap(), Math::max);
            }
        }
    }

    /** A client that knows the secret reads the node's counters and writes and reads a block. */
    private static void assertStillServes(RingNode node) throws Exception {
        try (RingStatsClient stats = new RingStatsClient(TransportSecurity.ofSecret(SECRET), Duration.ofSeconds(10))) {
            assertThat(stats.stats(node.self().id())).containsEntry("ringSize", 1L);
        }
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (TransportClient client = new TransportClient(group, TransportSecurity.ofSecret(SECRET), 1 << 20,
                Duration.ofSeconds(10))) {
            byte[] block = "still serving after the fuzz".getBytes(StandardCharsets.UTF_8);
            InetSocketAddress address = node.self().address();
            Frame put = client.request(address, MessageType.PUT_BLOCK, Payloads.putBlock("fuzz-probe", block)).get();
            assertThat(put.type()).isEqualTo(MessageType.OK);
            Frame get = client.request(address, MessageType.GET_BLOCK, Payloads.utf8("fuzz-probe")).get();
            assertThat(get.type()).isEqualTo(MessageType.DATA);
            assertThat(get.payload()).isEqualTo(block);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** No key a peer sent made the node write outside its store directory. */
    private void assertNothingOutside(Path store) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            assertThat(files.filter(p -> !p.equals(root) && !p.startsWith(store)).toList())
                    .as("files outside the store %s", store).isEmpty();
        }
    }

    private static long usedHeap() {
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    private static long usedHeapAfterGc() {
        System.gc();
        return usedHeap();
    }
}
