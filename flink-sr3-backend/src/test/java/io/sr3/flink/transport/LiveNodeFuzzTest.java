package io.sr3.flink.transport;

import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.MemberCodec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

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
 * names the seed, the connection and the bytes it sent (the server's nonces differ per run).
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
    /** The largest frame a reader here accepts from the node: far above any answer to these requests. */
    private static final int MAX_ANSWER = 1 << 20;
    /** Retained heap growth that would mean connections, frames or requests are kept after they ended. */
    private static final long HEAP_GROWTH_BOUND = 64L << 20;
    private static final int MAX_REPORTED_FAILURES = 5;

    /** What one hostile connection does. */
    private enum Attack {
        /** Random bytes (or a foreign protocol's greeting, mutated) before reading anything. */
        JUNK_BEFORE_CHALLENGE,
        /** A header with the right magic and version, a random type and length, then junk. */
        HEADER_THEN_JUNK,
        /** The CHALLENGE is read, then a correctly signed AUTH frame, mutated, is sent. */
        MUTATED_AUTH,
        /** After a real handshake: requests with mutated payloads, valid CRCs and MACs. Each must be answered. */
        MUTATED_REQUESTS,
        /** After a real handshake: a signed request frame whose bytes (header, payload, MAC) are mutated. */
        MUTATED_SIGNED_FRAME
    }

    @TempDir Path root;

    @Test
    void everyHostileConnectionIsAnsweredOrClosedAndTheNodeStillServes() throws Exception {
        NodeConfig config = TestingRing.testConfig().withSecret(SECRET);
        config = config.withTransport(config.security(), new TransportLimits(HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, 1024, 128));
        try (TestingRing ring = TestingRing.start(1, config, root)) {
            RingNode node = ring.node(0);
            long heapBefore = usedHeapAfterGc();
            AtomicLong heapHighWater = new AtomicLong(heapBefore);
            Map<Attack, AtomicInteger> connections = new EnumMap<>(Attack.class);
            Map<Attack, AtomicLong> bytesSent = new EnumMap<>(Attack.class);
            for (Attack attack : Attack.values()) {
                connections.put(attack, new AtomicInteger());
                bytesSent.put(attack, new AtomicLong());
            }
            AtomicInteger answers = new AtomicInteger();
            Queue<String> failures = new ConcurrentLinkedQueue<>();
            AtomicInteger failureCount = new AtomicInteger();

            long start = System.nanoTime();
            long stopStarting = start + MAX_TIME.toNanos();
            ExecutorService peers = Executors.newFixedThreadPool(PARALLEL_CONNECTIONS);
            try {
                for (int i = 0; i < MAX_CONNECTIONS; i++) {
                    int index = i;
                    Attack attack = Attack.values()[i % Attack.values().length];
                    peers.execute(() -> {
                        if (System.nanoTime() > stopStarting || failureCount.get() >= MAX_REPORTED_FAILURES) {
                            return;
                        }
                        HostileConnection connection = new HostileConnection(node, attack, new Random(Fuzzer.SEED + index));
                        try {
                            connection.run();
                            answers.addAndGet(connection.answers);
                        } catch (Throwable t) {
                            if (failureCount.incrementAndGet() <= MAX_REPORTED_FAILURES) {
                                failures.add(String.format("  connection #%d (%s): %s%n    sent: %s", index, attack, t,
                                        Mutator.hex(connection.sent.toByteArray())));
                            }
                        } finally {
                            connections.get(attack).incrementAndGet();
                            bytesSent.get(attack).addAndGet(connection.sent.size());
                            heapHighWater.accumulateAndGet(usedHeap(), Math::max);
                        }
                    });
                }
                peers.shutdown();
                // Each connection ends within its deadlines; the last ones start before MAX_TIME.
                Duration lastOnes = IDLE_TIMEOUT.plus(SLACK).plus(TestingRing.testConfig().requestTimeout()).multipliedBy(3);
                assertThat(peers.awaitTermination(MAX_TIME.plus(lastOnes).toMillis(), TimeUnit.MILLISECONDS))
                        .as("every hostile connection ended").isTrue();
            } finally {
                peers.shutdownNow();
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

            assertStillServes(node);
            long heapAfter = usedHeapAfterGc();
            int total = connections.values().stream().mapToInt(AtomicInteger::get).sum();
            for (Attack attack : Attack.values()) {
                System.out.printf("[fuzz] live node socket, %s: %d connections, %d bytes sent%n", attack,
                        connections.get(attack).get(), bytesSent.get(attack).get());
            }
            System.out.printf("[fuzz] live node socket: %d connections in %d ms, %d requests answered, %d handshakes "
                    + "refused; heap %d MiB before, high-water %d MiB, %d MiB after; seed %d%n", total, elapsed.toMillis(),
                    answers.get(), node.refusedHandshakes(), heapBefore >> 20, heapHighWater.get() >> 20, heapAfter >> 20,
                    Fuzzer.SEED);

            assertThat(failures).as("connections the node did not answer or close in time (%d in all), replay with "
                    + "-D%s=%d%n%s", failureCount.get(), Fuzzer.SEED_PROPERTY, Fuzzer.SEED, String.join("\n", failures))
                    .isEmpty();
            assertThat(total).as("connections tried").isGreaterThanOrEqualTo(MAX_CONNECTIONS / 3);
            assertThat(node.refusedHandshakes()).as("handshakes refused").isPositive();
            assertThat(heapAfter - heapBefore).as("heap retained after %d hostile connections", total)
                    .isLessThan(HEAP_GROWTH_BOUND);
            assertNothingOutside(node.store().directory());
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

    // ------------------------------------------------------------------ one connection

    /** One raw connection that attacks the node; {@link #run} throws if the node misbehaved. */
    private static final class HostileConnection {
        private final RingNode node;
        private final Attack attack;
        private final Mutator mutator;
        private final ByteArrayOutputStream sent = new ByteArrayOutputStream();
        private final SharedSecret secret = new SharedSecret(SECRET);
        private Socket socket;
        private InputStream in;
        private OutputStream out;
        private long connectedNanos;
        private long lastSentNanos;
        private boolean authenticated;
        @Nullable private FrameMac sendMac;
        @Nullable private FrameMac receiveMac;
        @Nullable private byte[] serverNonce;
        @Nullable private byte[] clientNonce;
        int answers;

        HostileConnection(RingNode node, Attack attack, Random random) {
            this.node = node;
            this.attack = attack;
            this.mutator = new Mutator(random);
        }

        void run() throws IOException {
            socket = new Socket();
            try {
                socket.connect(node.self().address(), (int) SLACK.toMillis());
                connectedNanos = System.nanoTime();
                in = socket.getInputStream();
                out = socket.getOutputStream();
                switch (attack) {
                    case JUNK_BEFORE_CHALLENGE -> send(junk());
                    case HEADER_THEN_JUNK -> send(headerThenJunk());
                    case MUTATED_AUTH -> {
                        expectChallenge();
                        clientNonce = SharedSecret.newNonce();
                        send(mutator.mutate(frame(MessageType.AUTH, 0, secret.clientAuth(serverNonce, clientNonce))));
                    }
                    case MUTATED_REQUESTS -> {
                        handshake();
                        mutatedRequests();
                        return; // every request answered: the connection may stay, the client closes it
                    }
                    case MUTATED_SIGNED_FRAME -> {
                        handshake();
                        byte[] request = signedFrame(MessageType.GET_BLOCK, 1, Payloads.utf8("fuzz-1"));
                        send(mutator.mutate(request));
                    }
                }
                expectFramesThenClose();
            } finally {
                socket.close();
            }
        }

        /** Random bytes, or a TLS ClientHello, HTTP request or SSH banner, mutated: what a wrong client sends. */
        private byte[] junk() {
            List<byte[]> foreign = List.of(
                    Mutator.unhex("16030100a5010000a10303"), // a TLS 1.2 ClientHello's first bytes
                    "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                    "SSH-2.0-OpenSSH_9.6\r\n".getBytes(StandardCharsets.US_ASCII),
                    ByteBuffer.allocate(4).putInt(Frame.MAGIC).array());
            return mutator.next(foreign);
        }

        private byte[] headerThenJunk() {
            Random random = mutator.random();
            MessageType[] types = MessageType.values();
            int type = random.nextInt(4) == 0 ? random.nextInt(256) : types[random.nextInt(types.length)].code();
            int[] lengths = {0, 1, 64, FrameDecoder.HANDSHAKE_FRAME_SIZE, FrameDecoder.HANDSHAKE_FRAME_SIZE + 1,
                    node.config().maxFrameSize(), Integer.MAX_VALUE, -1, random.nextInt()};
            ByteBuffer header = ByteBuffer.allocate(Frame.HEADER_SIZE).putInt(Frame.MAGIC).put(Frame.VERSION)
                    .put((byte) type).putLong(random.nextLong()).putInt(lengths[random.nextInt(lengths.length)])
                    .putInt(random.nextInt());
            byte[] junk = mutator.randomBytes(Mutator.MAX_RANDOM_LENGTH);
            return ByteBuffer.allocate(header.capacity() + junk.length).put(header.array()).put(junk).array();
        }

        private void handshake() throws IOException {
            expectChallenge();
            clientNonce = SharedSecret.newNonce();
            send(frame(MessageType.AUTH, 0, secret.clientAuth(serverNonce, clientNonce)));
            Frame ok = receive(connectedNanos + HANDSHAKE_TIMEOUT.plus(SLACK).toNanos());
            if (ok == null || ok.type() != MessageType.AUTH_OK
                    || !secret.acceptsServerProof(serverNonce, clientNonce, ok.payload())) {
                throw new AssertionError("A correct AUTH was answered " + ok);
            }
            authenticated = true;
            sendMac = secret.clientToServer(serverNonce, clientNonce);
            receiveMac = secret.serverToClient(serverNonce, clientNonce);
        }

        private void expectChallenge() throws IOException {
            Frame challenge = receive(connectedNanos + SLACK.toNanos());
            if (challenge == null || challenge.type() != MessageType.CHALLENGE
                    || challenge.payload().length != SharedSecret.NONCE_SIZE) {
                throw new AssertionError("Expected a CHALLENGE of " + SharedSecret.NONCE_SIZE + " bytes, got " + challenge);
            }
            serverNonce = challenge.payload();
        }

        /** Sends 1..8 signed requests with mutated payloads; every one must be answered, in any order. */
        private void mutatedRequests() throws IOException {
            Random random = mutator.random();
            int count = 1 + random.nextInt(8);
            Set<Long> pending = new HashSet<>();
            for (int i = 0; i < count; i++) {
                MessageType type = random.nextInt(8) == 0
                        ? MessageType.values()[random.nextInt(MessageType.values().length)]
                        : REQUEST_TYPES.get(random.nextInt(REQUEST_TYPES.size()));
                long requestId = 1000L + i;
                send(signedFrame(type, requestId, mutator.next(validPayloads(type))));
                pending.add(requestId);
            }
            long deadline = lastSentNanos + node.config().requestTimeout().plus(SLACK).toNanos();
            while (!pending.isEmpty()) {
                Frame answer = receive(deadline);
                if (answer == null) {
                    throw new AssertionError("The node closed the connection with requests " + pending
                            + " unanswered; every request had a valid MAC");
                }
                if (!answer.type().isResponse() || !pending.remove(answer.requestId())) {
                    throw new AssertionError("Unexpected answer " + answer + " while waiting for " + pending);
                }
                answers++;
            }
        }

        /** Reads well-formed frames until the node closes the connection, which it must do within its deadlines. */
        private void expectFramesThenClose() throws IOException {
            while (true) {
                long deadline = authenticated
                        ? lastSentNanos + IDLE_TIMEOUT.plus(SLACK).toNanos()
                        : connectedNanos + HANDSHAKE_TIMEOUT.plus(SLACK).toNanos();
                Frame frame = receive(deadline);
                if (frame == null) {
                    return;
                }
                if (frame.type() == MessageType.CHALLENGE && serverNonce == null) {
                    serverNonce = frame.payload(); // the attack did not wait for it
                } else if (frame.type() == MessageType.AUTH_OK && !authenticated) {
                    // A mutation the handshake does not see (the request id of the AUTH frame): that is fine.
                    authenticated = true;
                    receiveMac = secret.serverToClient(serverNonce, clientNonce);
                } else if (frame.type() != MessageType.ERROR && !(authenticated && frame.type().isResponse())) {
                    throw new AssertionError("Unexpected " + frame + " from the node");
                }
            }
        }

        /**
         * The next frame from the node, its CRC32C and (once authenticated) MAC verified; null if the
         * node closed the connection (at a frame boundary or, when it closed while writing, inside one).
         *
         * @throws AssertionError if the connection is still open at {@code deadlineNanos}, or the
         *     node sent something that is not a frame
         */
        @Nullable
        private Frame receive(long deadlineNanos) throws IOException {
            byte[] header = new byte[Frame.HEADER_SIZE];
            if (!readFully(header, deadlineNanos)) {
                return null;
            }
            ByteBuffer h = ByteBuffer.wrap(header);
            int magic = h.getInt();
            byte version = h.get();
            MessageType type = MessageType.fromCode(h.get() & 0xFF);
            long requestId = h.getLong();
            int length = h.getInt();
            int crc = h.getInt();
            if (magic != Frame.MAGIC || version != Frame.VERSION || type == null || length < 0 || length > MAX_ANSWER) {
                throw new AssertionError("The node sent a malformed frame header " + Mutator.hex(header));
            }
            byte[] payload = new byte[length];
            byte[] mac = new byte[receiveMac == null ? 0 : FrameMac.SIZE];
            if (!readFully(payload, deadlineNanos) || !readFully(mac, deadlineNanos)) {
                return null;
            }
            CRC32C expected = new CRC32C();
            expected.update(payload);
            if ((int) expected.getValue() != crc) {
                throw new AssertionError("The node sent a " + type + " frame with a wrong CRC32C");
            }
            if (receiveMac != null) {
                byte[] whole = ByteBuffer.allocate(header.length + length).put(header).put(payload).array();
                if (!receiveMac.verifyNext(Unpooled.wrappedBuffer(whole), mac)) {
                    throw new AssertionError("The node sent a " + type + " frame with a wrong MAC");
                }
            }
            return new Frame(type, requestId, payload);
        }

        /** Fills {@code bytes}; false if the node closed the connection first. */
        private boolean readFully(byte[] bytes, long deadlineNanos) throws IOException {
            int filled = 0;
            while (filled < bytes.length) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
                if (left <= 0) {
                    throw stillOpen();
                }
                socket.setSoTimeout((int) left);
                int read;
                try {
                    read = in.read(bytes, filled, bytes.length - filled);
                } catch (SocketTimeoutException e) {
                    throw stillOpen();
                } catch (SocketException reset) {
                    return false;
                }
                if (read < 0) {
                    return false;
                }
                filled += read;
            }
            return true;
        }

        private AssertionError stillOpen() {
            return new AssertionError("The node left the connection open " + (authenticated
                    ? "for more than " + IDLE_TIMEOUT.plus(SLACK) + " after its last frame (idle timeout " + IDLE_TIMEOUT + ")"
                    : "for more than " + HANDSHAKE_TIMEOUT.plus(SLACK) + " without a handshake (handshake timeout "
                            + HANDSHAKE_TIMEOUT + ")"));
        }

        private void send(byte[] bytes) throws IOException {
            sent.writeBytes(bytes);
            try {
                out.write(bytes);
                out.flush();
            } catch (SocketException closedWhileWriting) {
                // The node closed the connection at a header it refused: the rest does not matter.
            }
            lastSentNanos = System.nanoTime();
        }

        private byte[] signedFrame(MessageType type, long requestId, byte[] payload) {
            byte[] frame = frame(type, requestId, payload);
            byte[] mac = sendMac.next(Unpooled.wrappedBuffer(frame));
            return ByteBuffer.allocate(frame.length + mac.length).put(frame).put(mac).array();
        }

        private List<byte[]> validPayloads(MessageType type) {
            byte[] data = new byte[1 + mutator.random().nextInt(2000)];
            mutator.random().nextBytes(data);
            return switch (type) {
                case PUT_BLOCK -> List.of(Payloads.putBlock("fuzz-1", data), Payloads.putBlock("fuzz-2", new byte[0]));
                case GET_BLOCK, DELETE_BLOCK -> List.of(Payloads.utf8("fuzz-1"), Payloads.utf8("fuzz-missing"));
                case LIST_KEYS -> List.of(Payloads.utf8("fuzz-"), new byte[0]);
                // A claimed record is pinged: its host must not resolve, or a mutated port could reach another process.
                case PING -> List.of(new byte[0], MemberCodec.encode(new Member("n-fuzz", "fuzz.invalid", 6130, "")));
                case RELAY_BLOCK -> List.of(new RelayRequest("fuzz-1", data.length, 0, List.of()).encode(),
                        new RelayRequest("fuzz-1", 10, 0, List.of(node.self().id())).encode());
                case COMPARE_AND_PUT -> List.of(Payloads.compareAndPut("fuzz-3", null, data),
                        Payloads.compareAndPut("fuzz-3", data, null));
                default -> List.of(new byte[0], data);
            };
        }
    }

    private static final List<MessageType> REQUEST_TYPES = List.of(MessageType.PUT_BLOCK, MessageType.GET_BLOCK,
            MessageType.DELETE_BLOCK, MessageType.LIST_KEYS, MessageType.STATS, MessageType.PING,
            MessageType.RELAY_BLOCK, MessageType.COMPARE_AND_PUT);

    /** A frame as {@link FrameEncoder} writes it, without a MAC. */
    private static byte[] frame(MessageType type, long requestId, byte[] payload) {
        CRC32C crc = new CRC32C();
        crc.update(payload);
        return ByteBuffer.allocate(Frame.HEADER_SIZE + payload.length).putInt(Frame.MAGIC).put(Frame.VERSION)
                .put((byte) type.code()).putLong(requestId).putInt(payload.length).putInt((int) crc.getValue())
                .put(payload).array();
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
