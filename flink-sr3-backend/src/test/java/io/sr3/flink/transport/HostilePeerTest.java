package io.sr3.flink.transport;

import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.crypto.AEADBadTagException;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Peers that attack the handshake or the server's resources, against a real server on loopback:
 * replayed and reflected handshakes, frames injected after the handshake, connections that never
 * finish it or announce huge frames, and request floods. Raw sockets speak the protocol here, so
 * every attack is exactly what a hostile process could send.
 */
class HostilePeerTest {

    private static final String SECRET = "the-ring-secret";
    private static final int MAX_FRAME = 1 << 20;
    private static final Duration HANDSHAKE = Duration.ofSeconds(2);

    private EventLoopGroup group;
    private ExecutorService io;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void setUp() {
        group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        io = new ThreadPoolExecutor(2, 2, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(8));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        io.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    private TransportServer server(TransportLimits limits, RequestHandler handler) throws IOException {
        TransportServer server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(),
                TransportSecurity.ofSecret(SECRET), limits, MAX_FRAME, handler, io, null);
        closeables.add(server);
        return server;
    }

    private TransportServer echoServer() throws IOException {
        return server(new TransportLimits(HANDSHAKE, Duration.ofMinutes(1), 1024, 600),
                (request, remote) -> new Frame(MessageType.DATA, 0, request.payload()));
    }

    // ------------------------------------------------------------------ a raw protocol peer

    /** One raw connection that speaks the wire format by hand. */
    private static final class RawPeer implements AutoCloseable {
        final Socket socket = new Socket();
        final DataInputStream in;
        final DataOutputStream out;
        FrameSeal sendSeal;
        FrameSeal receiveSeal;

        RawPeer(InetSocketAddress address) throws IOException {
            socket.connect(address);
            socket.setSoTimeout(10_000);
            in = new DataInputStream(socket.getInputStream());
            out = new DataOutputStream(socket.getOutputStream());
        }

        void send(MessageType type, long requestId, byte[] payload) throws IOException {
            send(type, requestId, payload, false);
        }

        void send(MessageType type, long requestId, byte[] payload, boolean wrongTag) throws IOException {
            byte[] frame = sendSeal == null ? SealedFrames.clear(type, requestId, payload)
                    : SealedFrames.sealed(sendSeal, type, requestId, payload);
            if (wrongTag) {
                frame[frame.length - 1] ^= 1;
            }
            out.write(frame);
            out.flush();
        }

        Frame receive() throws IOException {
            byte[] header = new byte[Frame.HEADER_SIZE];
            in.readFully(header);
            ByteBuffer h = ByteBuffer.wrap(header);
            h.getInt();
            h.get();
            MessageType type = MessageType.fromCode(h.get() & 0xFF);
            long requestId = h.getLong();
            byte[] payload = new byte[h.getInt() + (receiveSeal == null ? 0 : FrameSeal.OVERHEAD)];
            in.readFully(payload);
            if (receiveSeal != null) {
                try {
                    payload = SealedFrames.open(receiveSeal, header, payload);
                } catch (AEADBadTagException e) {
                    throw new AssertionError("The server's frame does not open", e);
                }
            }
            return new Frame(type, requestId, payload);
        }

        /** Runs the client side of the handshake with {@code secret}; returns the server nonce. */
        byte[] handshake(String secret) throws IOException {
            SharedSecret shared = new SharedSecret(secret);
            Frame challenge = receive();
            assertThat(challenge.type()).isEqualTo(MessageType.CHALLENGE);
            byte[] clientNonce = SharedSecret.newNonce();
            send(MessageType.AUTH, 0, shared.clientAuth(challenge.payload(), clientNonce));
            Frame ok = receive();
            assertThat(ok.type()).isEqualTo(MessageType.AUTH_OK);
            assertThat(shared.acceptsServerProof(challenge.payload(), clientNonce, ok.payload())).isTrue();
            sendSeal = shared.clientToServer(challenge.payload(), clientNonce);
            receiveSeal = shared.serverToClient(challenge.payload(), clientNonce);
            return challenge.payload();
        }

        /** Whether the peer closed the connection (reading until end of stream, at most a megabyte). */
        boolean closedByPeer() throws IOException {
            byte[] buffer = new byte[4096];
            long total = 0;
            try {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    total += read;
                    if (total > (1 << 20)) {
                        return false;
                    }
                }
                return true;
            } catch (SocketException reset) {
                return true;
            } catch (SocketTimeoutException stillOpen) {
                return false;
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    // ------------------------------------------------------------------ handshake

    @Test
    void aPeerThatKnowsTheSecretIsServedAndEveryFrameIsSealed() throws Exception {
        TransportServer server = echoServer();
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.handshake(SECRET);
            peer.send(MessageType.GET_BLOCK, 7, Payloads.utf8("hello"));
            Frame answer = peer.receive();
            assertThat(answer.requestId()).isEqualTo(7);
            assertThat(Payloads.utf8(answer.payload())).isEqualTo("hello");
        }
    }

    @Test
    void aFrameInjectedAfterTheHandshakeWithAWrongTagClosesTheConnection() throws Exception {
        TransportServer server = echoServer();
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.handshake(SECRET);
            peer.send(MessageType.GET_BLOCK, 1, Payloads.utf8("forged"), true);
            assertThat(peer.closedByPeer()).isTrue();
        }
    }

    @Test
    void aClearFrameAfterTheHandshakeIsNotServed() throws Exception {
        TransportServer server = echoServer();
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.handshake(SECRET);
            peer.sendSeal = null; // a hijacker who does not know the session key
            peer.send(MessageType.GET_BLOCK, 1, Payloads.utf8("hijacked"));
            peer.send(MessageType.GET_BLOCK, 2, new byte[64]); // enough bytes to complete the tag it waits for
            assertThat(peer.closedByPeer()).isTrue();
        }
    }

    @Test
    void aReplayedHandshakeIsRefused() throws Exception {
        TransportServer server = echoServer();
        byte[] capturedAuth;
        try (RawPeer honest = new RawPeer(server.address())) {
            Frame challenge = honest.receive();
            capturedAuth = new SharedSecret(SECRET).clientAuth(challenge.payload(), SharedSecret.newNonce());
            honest.send(MessageType.AUTH, 0, capturedAuth);
            assertThat(honest.receive().type()).isEqualTo(MessageType.AUTH_OK);
        }
        try (RawPeer replayer = new RawPeer(server.address())) {
            replayer.receive(); // a fresh challenge
            replayer.send(MessageType.AUTH, 0, capturedAuth);
            Frame answer = replayer.receive();
            assertThat(answer.type()).isEqualTo(MessageType.ERROR);
            assertThat(Payloads.errorCode(answer.payload())).isEqualTo(ErrorCode.UNAUTHENTICATED);
            assertThat(replayer.closedByPeer()).isTrue();
        }
        Deadline.poll("the refusal to be counted", TestingRing.AWAIT_TIMEOUT, () -> server.refusedHandshakes() == 1);
    }

    @Test
    void aFakeServerCannotTurnAClientsProofIntoAServerProof() throws Exception {
        // The fake server sends a challenge, then reflects the client's own proof back as AUTH_OK.
        try (ServerSocket fake = new ServerSocket(0)) {
            TransportClient client = new TransportClient(group, TransportSecurity.ofSecret(SECRET), MAX_FRAME,
                    Duration.ofSeconds(10));
            closeables.add(client);
            CompletableFuture<Frame> request = client.request(
                    new InetSocketAddress("127.0.0.1", fake.getLocalPort()), MessageType.GET_BLOCK, new byte[0]);
            try (Socket accepted = fake.accept()) {
                accepted.setSoTimeout(10_000);
                DataOutputStream out = new DataOutputStream(accepted.getOutputStream());
                DataInputStream in = new DataInputStream(accepted.getInputStream());
                writeRaw(out, MessageType.CHALLENGE, SharedSecret.newNonce());
                byte[] header = new byte[Frame.HEADER_SIZE];
                in.readFully(header);
                byte[] auth = new byte[ByteBuffer.wrap(header, 14, 4).getInt()];
                in.readFully(auth);
                byte[] clientProof = java.util.Arrays.copyOfRange(auth, SharedSecret.NONCE_SIZE, auth.length);
                writeRaw(out, MessageType.AUTH_OK, clientProof);
                assertThatThrownBy(request::get).isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(AuthenticationException.class)
                        .hasMessageContaining("could not prove");
            }
        }
    }

    @Test
    void aChallengeOfTheWrongLengthIsRefusedByTheClient() throws Exception {
        try (ServerSocket fake = new ServerSocket(0)) {
            TransportClient client = new TransportClient(group, TransportSecurity.ofSecret(SECRET), MAX_FRAME,
                    Duration.ofSeconds(10));
            closeables.add(client);
            CompletableFuture<Frame> request = client.request(
                    new InetSocketAddress("127.0.0.1", fake.getLocalPort()), MessageType.GET_BLOCK, new byte[0]);
            try (Socket accepted = fake.accept()) {
                // The old oracle: a challenge that is a nonce followed by "server".
                writeRaw(new DataOutputStream(accepted.getOutputStream()), MessageType.CHALLENGE,
                        ByteBuffer.allocate(38).put(SharedSecret.newNonce()).put(Payloads.utf8("server")).array());
                assertThatThrownBy(request::get).hasCauseInstanceOf(AuthenticationException.class)
                        .hasMessageContaining("malformed");
            }
        }
    }

    private static void writeRaw(DataOutputStream out, MessageType type, byte[] payload) throws IOException {
        CRC32C crc = new CRC32C();
        crc.update(payload);
        out.writeInt(Frame.MAGIC);
        out.writeByte(Frame.VERSION);
        out.writeByte(type.code());
        out.writeLong(0);
        out.writeInt(payload.length);
        out.writeInt((int) crc.getValue());
        out.write(payload);
        out.flush();
    }

    // ------------------------------------------------------------------ resources

    @Test
    void connectionsThatNeverFinishTheHandshakeAreClosedAndTheLimitsHold() throws Exception {
        TransportServer server = server(new TransportLimits(HANDSHAKE, Duration.ofMinutes(1), 1024, 100),
                (request, remote) -> new Frame(MessageType.DATA, 0, request.payload()));
        List<Socket> sockets = new ArrayList<>();
        long heapBefore = usedHeap();
        long peakHeap = heapBefore;
        int peakOpen = 0;
        long start = System.nanoTime();
        try {
            for (int i = 0; i < 500; i++) {
                Socket socket = new Socket();
                socket.connect(server.address());
                socket.setSoTimeout((int) HANDSHAKE.toMillis() * 5);
                sockets.add(socket);
                peakHeap = Math.max(peakHeap, usedHeap());
                peakOpen = Math.max(peakOpen, server.openConnections());
            }
            // Each one is refused at once (over the limit) or closed at the handshake deadline. A refusal
            // is counted before its channel's close completes, so wait for both.
            Deadline.poll("every silent connection to be refused and closed", TestingRing.AWAIT_TIMEOUT,
                    () -> server.refusedConnections() + server.refusedHandshakes() == 500 && server.openConnections() == 0);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(HANDSHAKE.multipliedBy(5));
            assertThat(peakOpen).as("open at once, per address").isLessThanOrEqualTo(100);
            assertThat(server.refusedConnections()).as("refused over the per-address limit").isPositive();
            System.out.printf("[hostile] 500 silent connections: %d refused at once, %d closed at the handshake "
                    + "deadline; heap %d -> peak %d MiB%n", server.refusedConnections(), server.refusedHandshakes(),
                    heapBefore >> 20, peakHeap >> 20);
        } finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
        try (RawPeer honest = new RawPeer(server.address())) {
            honest.handshake(SECRET);
        }
    }

    @Test
    void aHugeFrameAnnouncedBeforeTheHandshakeClosesTheConnectionAtItsHeader() throws Exception {
        TransportServer server = echoServer();
        List<RawPeer> peers = new ArrayList<>();
        try {
            for (int i = 0; i < 200; i++) {
                RawPeer peer = new RawPeer(server.address());
                peers.add(peer);
                ByteBuffer header = ByteBuffer.allocate(Frame.HEADER_SIZE);
                header.putInt(Frame.MAGIC).put(Frame.VERSION).put((byte) MessageType.AUTH.code()).putLong(0)
                        .putInt(MAX_FRAME).putInt(0);
                peer.out.write(header.array());
                peer.out.flush();
            }
            for (RawPeer peer : peers) {
                assertThat(peer.closedByPeer()).as("closed at the header").isTrue();
            }
        } finally {
            for (RawPeer peer : peers) {
                peer.close();
            }
        }
    }

    @Test
    void aFloodOfRequestsIsAnsweredBusyNotQueuedWithoutEnd() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        TransportServer server = server(TransportLimits.defaults(), (request, remote) -> {
            release.await();
            return new Frame(MessageType.OK, 0, new byte[0]);
        });
        int busy = 0;
        try (RawPeer peer = new RawPeer(server.address())) {
            peer.handshake(SECRET);
            int requests = 200;
            for (int i = 0; i < requests; i++) {
                peer.send(MessageType.GET_BLOCK, i, new byte[0]);
            }
            // 2 threads and 8 queue slots: at most 10 requests wait; every other one is answered at once.
            for (int i = 0; i < requests - 10; i++) {
                Frame answer = peer.receive();
                assertThat(answer.type()).isEqualTo(MessageType.ERROR);
                assertThat(Payloads.errorCode(answer.payload())).isEqualTo(ErrorCode.BUSY);
                busy++;
            }
            release.countDown();
            for (int i = 0; i < 10; i++) {
                assertThat(peer.receive().type()).isEqualTo(MessageType.OK);
            }
        } finally {
            release.countDown();
        }
        assertThat(server.busyAnswers()).isEqualTo(busy);
    }

    private static long usedHeap() {
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }
}
