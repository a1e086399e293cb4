package io.sr3.flink.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Block transfers and everything else travel on separate connections to a peer: over a slow link
 * (a throttling proxy on loopback) a ping sent behind a few blocks is answered while the blocks are
 * still on their way, instead of waiting for them in the same TCP stream.
 */
class ConnectionLanesTest {

    private static final int MAX_FRAME = 4 * 1024 * 1024;
    private static final long LINK = 2_000_000;

    private EventLoopGroup group;
    private ExecutorService io;

    @BeforeEach
    void setUp() {
        group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        io = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void tearDown() throws Exception {
        io.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    @Test
    void aPingOvertakesBlocksQueuedOnASlowLink() throws Exception {
        try (TransportServer server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(),
                        TransportSecurity.ofSecret("lanes"), TransportLimits.defaults(), MAX_FRAME,
                        (request, remote) -> new Frame(MessageType.OK, 0, new byte[0]), io, null);
                ThrottlingProxy slowLink = new ThrottlingProxy(server.address(), LINK);
                TransportClient client = new TransportClient(group, TransportSecurity.ofSecret("lanes"), MAX_FRAME,
                        Duration.ofSeconds(30))) {
            // Both connections up before the measurement: handshakes are not what is measured.
            client.request(slowLink.address(), MessageType.PING, new byte[0]).get(10, TimeUnit.SECONDS);
            client.request(slowLink.address(), MessageType.PUT_BLOCK, new byte[0]).get(10, TimeUnit.SECONDS);
            assertThat(slowLink.accepted()).as("connections to the peer").isEqualTo(2);

            List<CompletableFuture<Frame>> blocks = new ArrayList<>();
            for (int i = 0; i < 3; i++) { // 3 MiB: about 1.6 s on the 2 MB/s link
                blocks.add(client.request(slowLink.address(), MessageType.PUT_BLOCK, new byte[1024 * 1024]));
            }
            long sent = System.nanoTime();
            client.request(slowLink.address(), MessageType.PING, new byte[0]).get(10, TimeUnit.SECONDS);
            long pingMillis = (System.nanoTime() - sent) / 1_000_000;
            long blocksDone = blocks.stream().filter(CompletableFuture::isDone).count();
            assertThat(blocksDone).as("blocks answered before the ping (ping took %d ms)", pingMillis).isLessThan(3);
            CompletableFuture.allOf(blocks.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            assertThat(slowLink.accepted()).as("connections to the peer").isEqualTo(2);
        }
    }
}
