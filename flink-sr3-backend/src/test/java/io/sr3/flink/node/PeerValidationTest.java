package io.sr3.flink.node;

import io.sr3.flink.testing.Deadline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.MemberCodec;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.Frame;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.RelayRequest;
import io.sr3.flink.transport.RemoteException;
import io.sr3.flink.transport.RequestHandler;
import io.sr3.flink.transport.TransportServer;
import org.apache.flink.testutils.logging.LoggerAuditingExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.event.Level;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Peers are believed only as far as they prove themselves, against real nodes over real sockets:
 * a PING's claimed record is hearsay until that member answers itself, a ping answer counts only
 * from the address dialled, and a relay route names only live members, each once.
 */
class PeerValidationTest {

    @TempDir Path root;

    @RegisterExtension
    final LoggerAuditingExtension detectorLog = new LoggerAuditingExtension(FailureDetector.class, Level.INFO);

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    @Test
    void aPingClaimingANodeThatIsNotRunningDoesNotMakeItAMember() throws Exception {
        TestingRing ring = closing(TestingRing.start(1, TestingRing.testConfig(), root.resolve("ring")));
        RingNode node = ring.node(0);
        Member ghost = new Member("n00000000000ghost", "127.0.0.1", unusedPort(), "");

        Frame answer = node.client().request(node.self().address(), MessageType.PING, MemberCodec.encode(ghost)).join();
        assertThat(MemberCodec.decodeList(answer.payload())).first().isEqualTo(node.self());
        assertThat(node.membership().isLive(ghost)).as("the claim alone makes no member").isFalse();

        // A node started after the claim joins through the next round, which also probed the ghost's address.
        RingNode witness = closing(RingNode.start(TestingRing.testConfig().withPortAndStore(0, root.resolve("witness"))));
        Deadline.poll("a real node to join", TestingRing.AWAIT_TIMEOUT, () -> witness.self().isIn(node.membership().members()));
        assertThat(node.membership().isLive(ghost)).as("a claimed member that never answered").isFalse();
        assertThat(node.membership().members()).containsExactlyInAnyOrder(node.self(), witness.self());
    }

    @Test
    void aPingSenderThatAnswersAtTheAddressItClaimsJoins() throws Exception {
        NodeConfig config = TestingRing.testConfig();
        RingNode node = closing(RingNode.start(config.withPortAndStore(0, root.resolve("node"))));
        Member[] self = new Member[1];
        TransportServer peer = startServer(config,
                (request, remote) -> new Frame(MessageType.DATA, 0, MemberCodec.encodeList(List.of(self[0]))));
        self[0] = new Member("n000000000000peer", "127.0.0.1", peer.address().getPort(), "");

        node.client().request(node.self().address(), MessageType.PING, MemberCodec.encode(self[0])).join();
        Deadline.poll("the sender to join once it answers a ping", TestingRing.AWAIT_TIMEOUT, () -> node.membership().isLive(self[0]));
        assertThat(node.membership().current(self[0])).isEqualTo(self[0]);
    }

    @Test
    void aPingAnswerInTheNameOfAnotherAddressDoesNotKeepADeadMemberAlive() throws Exception {
        NodeConfig config = TestingRing.testConfig();
        Member dead = new Member("n0000000000000dead", "127.0.0.1", unusedPort(), "");
        AtomicInteger answered = new AtomicInteger();
        TransportServer impostor = startServer(config, (request, remote) -> {
            answered.incrementAndGet();
            return new Frame(MessageType.DATA, 0, MemberCodec.encodeList(List.of(dead)));
        });
        String impostorId = "127.0.0.1:" + impostor.address().getPort();
        // A seed: pinged every round, whoever is a member.
        RingNode node = closing(RingNode.start(config.withSeeds(List.of(impostorId)).withPortAndStore(0, root.resolve("node"))));
        // Both were members: the dead node, and one whose address now answers in the dead node's name.
        Member replaced = new Member("n00000000replaced", "127.0.0.1", impostor.address().getPort(), "");
        node.membership().add(dead);
        node.membership().add(replaced);

        Deadline.poll("both to leave placement while another address answers in the dead node's name", TestingRing.AWAIT_TIMEOUT, () -> !node.membership().isLive(dead) && !node.membership().isLive(replaced));
        int answersSoFar = answered.get();
        Deadline.poll("three more answers in the dead node's name", TestingRing.AWAIT_TIMEOUT, () -> answered.get() >= answersSoFar + 3);
        assertThat(node.membership().isLive(dead)).as("answers from another address bring it back").isFalse();
        assertThat(node.membership().members()).containsExactly(node.self());
        assertThat(detectorLog.getMessages().stream().filter(m -> m.contains("the node answering at " + impostorId)))
                .as("the foreign answers at a member's address, logged once")
                .singleElement().asString().contains(dead.id()).contains(replaced.nodeId());
    }

    @Test
    void aSeedNamedOtherwiseThanItsNodeJoinsThroughTheAddressTheNodeGives() throws Exception {
        assumeTrue(InetAddress.getByName("localhost").getHostAddress().equals("127.0.0.1"), "localhost is 127.0.0.1");
        NodeConfig config = TestingRing.testConfig();
        Member[] self = new Member[1];
        TransportServer peer = startServer(config,
                (request, remote) -> new Frame(MessageType.DATA, 0, MemberCodec.encodeList(List.of(self[0]))));
        // The node names itself by DNS name; the seed gives its IP (a seed's name is resolved to its IPs
        // before it is dialled, so this is the way round in which the two differ).
        self[0] = new Member("n000000000000peer", "localhost", peer.address().getPort(), "");
        String alias = "127.0.0.1:" + peer.address().getPort();

        RingNode node = closing(RingNode.start(config.withSeeds(List.of(alias)).withPortAndStore(0, root.resolve("node"))));
        Deadline.poll("the seed's node to join at its own address", TestingRing.AWAIT_TIMEOUT, () -> node.membership().isLive(self[0]));
        assertThat(node.membership().current(self[0]).id()).isEqualTo(self[0].id());
        assertThat(detectorLog.getMessages().stream().filter(m -> m.contains(alias))).singleElement().asString()
                .contains("answers as " + self[0].id());
    }

    @Test
    void aSeedGivenByDnsNameIsDialledAtTheAddressesTheNameResolvesTo() throws Exception {
        assumeTrue(InetAddress.getByName("localhost").getHostAddress().equals("127.0.0.1"), "localhost is 127.0.0.1");
        NodeConfig config = TestingRing.testConfig();
        Member[] self = new Member[1];
        TransportServer peer = startServer(config,
                (request, remote) -> new Frame(MessageType.DATA, 0, MemberCodec.encodeList(List.of(self[0]))));
        self[0] = new Member("n000000000000peer", "127.0.0.1", peer.address().getPort(), "");
        String byName = "localhost:" + peer.address().getPort();

        RingNode node = closing(RingNode.start(config.withSeeds(List.of(byName)).withPortAndStore(0, root.resolve("node"))));
        assertThat(node.membership().isLive(self[0])).as("a member after the first round, at its IP").isTrue();
        assertThat(detectorLog.getMessages().stream().filter(m -> m.contains("answers as"))).isEmpty();
    }

    @Test
    void aRelayRouteThroughANonMemberOrTwiceThroughOneIsRefusedByALiveNode() throws Exception {
        TestingRing ring = closing(TestingRing.start(3, TestingRing.testConfig(), root.resolve("ring")));
        byte[] data = "relayed".getBytes();
        ring.node(2).store().put("b-r", data);
        String holder = ring.node(2).self().id();
        String outsider = "127.0.0.1:" + unusedPort();

        for (List<String> route : List.of(List.of(holder, holder), List.of(outsider), List.of(holder, outsider))) {
            RelayRequest request = new RelayRequest("b-r", data.length, crc(data), route);
            assertThatThrownBy(() -> ring.node(0).client()
                            .request(ring.node(1).self().address(), MessageType.RELAY_BLOCK, request.encode()).join())
                    .as("route %s through the network", route)
                    .isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(RemoteException.class)
                    .hasMessageContaining("BAD_REQUEST");
            CompletionException local = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
                    () -> ring.node(0).relay(request).join());
            assertThat(local.getCause()).isInstanceOf(RelayException.class);
            assertThat(((RelayException) local.getCause()).code()).as("route %s from this node", route)
                    .isEqualTo(ErrorCode.BAD_REQUEST);
        }
        assertThat(ring.node(0).relay(new RelayRequest("b-r", data.length, crc(data), List.of(ring.node(1).self().id(), holder)))
                .join()).as("a route through members").isEqualTo(java.nio.ByteBuffer.wrap(data));
    }

    /** A transport server like a node's, with the same security, answering every request with {@code handler}. */
    private TransportServer startServer(NodeConfig config, RequestHandler handler) throws IOException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        ExecutorService io = Executors.newSingleThreadExecutor();
        closeables.add(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync());
        closeables.add(io::shutdownNow);
        return closing(TransportServer.start(group, "127.0.0.1", List.of(0).iterator(), config.security(), config.limits(),
                config.maxFrameSize(), handler, io, null));
    }

    private <T extends AutoCloseable> T closing(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    /** A port nothing listens on (for the instant it is returned). */
    private static int unusedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static int crc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
    }
}
