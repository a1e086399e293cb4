package io.sr3.flink.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The wire protocol over real loopback sockets: handshake, limits, corruption, deadlines. */
class TransportTest {

    private static final int MAX_FRAME = 64 * 1024;
    private static final Duration DEADLINE = Duration.ofSeconds(2);

    private EventLoopGroup group;
    private ExecutorService io;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void setUp() {
        group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        io = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        io.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /** A server that echoes GET_BLOCK payloads back as DATA. */
    private TransportServer echoServer(String secret) throws IOException {
        TransportServer server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(), TransportSecurity.ofSecret(secret),
                TransportLimits.defaults(), MAX_FRAME,
                (request, remote) -> new Frame(MessageType.DATA, 0, request.payload()), io, null);
        closeables.add(server);
        return server;
    }

    private TransportClient client(String secret) throws IOException {
        TransportClient client = new TransportClient(group, TransportSecurity.ofSecret(secret), MAX_FRAME, DEADLINE);
        closeables.add(client);
        return client;
    }

    @Test
    void requestsAreAnsweredAndCorrelated() throws Exception {
        TransportServer server = echoServer("s3cret");
        TransportClient client = client("s3cret");
        List<java.util.concurrent.CompletableFuture<Frame>> answers = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            answers.add(client.request(server.address(), MessageType.GET_BLOCK, Payloads.utf8("key-" + i)));
        }
        for (int i = 0; i < 50; i++) {
            assertThat(Payloads.utf8(answers.get(i).get().payload())).isEqualTo("key-" + i);
        }
    }

    @Test
    void peerWithWrongSecretIsRefused() throws Exception {
        TransportServer server = echoServer("right");
        assertThatThrownBy(() -> client("wrong").request(server.address(), MessageType.GET_BLOCK, new byte[0]).get())
                .hasCauseInstanceOf(AuthenticationException.class)
                .hasMessageContaining("sr3.transport.secret");
    }

    @Test
    void peerWithoutSecretIsRefused() throws Exception {
        TransportServer server = echoServer("right");
        assertThatThrownBy(() -> client(null).request(server.address(), MessageType.GET_BLOCK, new byte[0]).get())
                .hasCauseInstanceOf(AuthenticationException.class);
    }

    @Test
    void serverWithoutTheSecretIsNotTrusted() throws Exception {
        TransportServer server = echoServer(null);
        assertThatThrownBy(() -> client("mine").request(server.address(), MessageType.GET_BLOCK, new byte[0]).get())
                .hasCauseInstanceOf(AuthenticationException.class)
                .hasMessageContaining("could not prove");
    }

    @Test
    void requestBeforeHandshakeClosesConnection() throws Exception {
        TransportServer server = echoServer("right");
        try (Socket socket = new Socket()) {
            socket.connect(server.address());
            socket.setSoTimeout((int) DEADLINE.toMillis() * 5);
            writeFrame(socket, Frame.MAGIC, MessageType.GET_BLOCK.code(), new byte[] {1, 2, 3}, 3, true);
            assertClosedByPeer(socket);
        }
    }

    @Test
    void oversizedFrameClosesConnectionWithoutBufferingIt() throws Exception {
        TransportServer server = echoServer(null);
        try (Socket socket = new Socket()) {
            socket.connect(server.address());
            socket.setSoTimeout((int) DEADLINE.toMillis() * 5);
            // Claims 1 GiB; sends only the header. The server must refuse on the header alone.
            writeFrame(socket, Frame.MAGIC, MessageType.AUTH.code(), new byte[0], 1 << 30, false);
            assertClosedByPeer(socket);
        }
        // The server still serves well-behaved peers.
        assertThat(client(null).request(server.address(), MessageType.GET_BLOCK, Payloads.utf8("ok")).get().payload())
                .isEqualTo(Payloads.utf8("ok"));
    }

    @Test
    void badMagicClosesConnection() throws Exception {
        TransportServer server = echoServer(null);
        try (Socket socket = new Socket()) {
            socket.connect(server.address());
            socket.setSoTimeout((int) DEADLINE.toMillis() * 5);
            writeFrame(socket, 0x48545450 /* "HTTP" */, MessageType.AUTH.code(), new byte[0], 0, true);
            assertClosedByPeer(socket);
        }
    }

    @Test
    void payloadWithWrongChecksumClosesConnection() throws Exception {
        TransportServer server = echoServer(null);
        try (Socket socket = new Socket()) {
            socket.connect(server.address());
            socket.setSoTimeout((int) DEADLINE.toMillis() * 5);
            writeFrame(socket, Frame.MAGIC, MessageType.AUTH.code(), new byte[] {9, 9, 9}, 3, false);
            assertClosedByPeer(socket);
        }
    }

    @Test
    void requestToDeadPeerFailsFast() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        assertThatThrownBy(() -> client(null).request(new InetSocketAddress("127.0.0.1", port), MessageType.GET_BLOCK, new byte[0]).get())
                .hasCauseInstanceOf(PeerUnavailableException.class)
                .hasMessageContaining("127.0.0.1:" + port);
    }

    @Test
    void requestToSilentPeerFailsAtItsDeadline() throws Exception {
        try (ServerSocket silent = new ServerSocket(0)) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", silent.getLocalPort());
            // The peer accepts the TCP connection (backlog) but never speaks the protocol.
            assertThatThrownBy(() -> client(null).request(address, MessageType.GET_BLOCK, new byte[0], Duration.ofMillis(300)).get())
                    .hasCauseInstanceOf(RequestTimeoutException.class)
                    .hasMessageContaining("300 ms");
        }
    }

    @Test
    void pendingRequestsFailWhenConnectionCloses() throws Exception {
        java.util.concurrent.CountDownLatch received = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        TransportServer server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(), TransportSecurity.none(),
                TransportLimits.defaults(), MAX_FRAME,
                (request, remote) -> {
                    received.countDown();
                    release.await();
                    return new Frame(MessageType.OK, 0, new byte[0]);
                }, io, null);
        closeables.add(server);
        TransportClient client = new TransportClient(group, TransportSecurity.none(), MAX_FRAME, Duration.ofSeconds(30));
        closeables.add(client);
        var answer = client.request(server.address(), MessageType.GET_BLOCK, new byte[0]);
        assertThat(received.await(10, TimeUnit.SECONDS)).isTrue();
        client.disconnect(server.address());
        assertThatThrownBy(answer::get).hasCauseInstanceOf(PeerUnavailableException.class);
        release.countDown();
    }

    @Test
    void remoteErrorsCarryTheirCode() throws Exception {
        TransportServer server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(), TransportSecurity.none(),
                TransportLimits.defaults(), MAX_FRAME,
                (request, remote) -> new Frame(MessageType.ERROR, 0, Payloads.error(ErrorCode.NOT_FOUND, "no such block")), io, null);
        closeables.add(server);
        assertThatThrownBy(() -> client(null).request(server.address(), MessageType.GET_BLOCK, new byte[0]).get())
                .hasCauseInstanceOf(RemoteException.class)
                .hasMessageContaining("NOT_FOUND")
                .hasMessageContaining("no such block");
    }

    @Test
    void aBlockTravelsApartFromItsKeyAndKeepsTheChecksumItWasSentWith() throws Exception {
        byte[] data = new byte[5 * FrameEncoder.SLICE_SIZE + 123]; // several slices, several reads
        new java.util.Random(7).nextBytes(data);
        int crc = Crc32c.of(data);
        List<Frame> received = new java.util.concurrent.CopyOnWriteArrayList<>();
        TransportServer server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(),
                TransportSecurity.ofSecret("s3cret"), TransportLimits.defaults(), 1 << 20, (request, remote) -> {
                    received.add(request);
                    return Frame.ofBlock(MessageType.DATA, 0, request.block(), request.blockCrc());
                }, io, null);
        closeables.add(server);
        TransportClient client = new TransportClient(group, TransportSecurity.ofSecret("s3cret"), 1 << 20, DEADLINE);
        closeables.add(client);

        Frame answer = client.request(server.address(), Payloads.putBlock("b-key", data, crc), DEADLINE).get();

        Payloads.BlockPut put = Payloads.putBlock(received.get(0));
        assertThat(put.key()).isEqualTo("b-key");
        assertThat(put.data()).isEqualTo(java.nio.ByteBuffer.wrap(data));
        assertThat(put.crc32c()).isEqualTo(crc);
        assertThat(answer.head()).isEmpty();
        assertThat(answer.blockBytes()).isEqualTo(data);
        assertThat(answer.blockCrc()).isEqualTo(crc);
    }

    @Test
    void aBlockSentWithAWrongChecksumNeverReachesTheHandler() throws Exception {
        byte[] data = new byte[3 * FrameEncoder.SLICE_SIZE];
        new java.util.Random(8).nextBytes(data);
        List<Frame> received = new java.util.concurrent.CopyOnWriteArrayList<>();
        TransportServer server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(), TransportSecurity.none(),
                TransportLimits.defaults(), 1 << 20, (request, remote) -> {
                    received.add(request);
                    return new Frame(MessageType.OK, 0, new byte[0]);
                }, io, null);
        closeables.add(server);
        TransportClient client = new TransportClient(group, TransportSecurity.none(), 1 << 20, DEADLINE);
        closeables.add(client);

        assertThatThrownBy(() -> client.request(server.address(), Payloads.putBlock("b-key", data, Crc32c.of(data) ^ 1),
                        DEADLINE).get())
                .hasCauseInstanceOf(TransportException.class);
        assertThat(received).isEmpty();
    }

    private static void writeFrame(Socket socket, int magic, int type, byte[] payload, int claimedLength, boolean rightCrc)
            throws IOException {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(payload);
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(magic);
        out.writeByte(Frame.VERSION);
        out.writeByte(type);
        out.writeLong(1);
        out.writeInt(claimedLength);
        out.writeInt(rightCrc ? (int) crc.getValue() : (int) crc.getValue() + 1);
        out.write(payload);
        out.flush();
    }

    /** Reads until the peer closes; the CHALLENGE it sent first is skipped. */
    private static void assertClosedByPeer(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[4096];
        int read;
        long total = 0;
        try {
            while ((read = in.read(buffer)) >= 0) {
                total += read;
                assertThat(total).as("bytes before close").isLessThan(1 << 20);
            }
        } catch (java.net.SocketException reset) {
            return; // connection reset by the peer: closed as well
        }
        assertThat(read).isEqualTo(-1);
    }
}
