package io.sr3.flink.node;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;
import io.sr3.flink.transport.TransportClient;
import io.sr3.flink.transport.TransportSecurity;

import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Reads ring nodes' counters ({@code STATS}) from outside the ring, without joining it: for
 * tests, demos and operators watching a ring that runs in other processes.
 */
@ThreadSafe
public final class RingStatsClient implements AutoCloseable {

    private final EventLoopGroup eventLoops;
    private final TransportClient client;

    /** @param security the ring's TLS settings and secret ({@link TransportSecurity#none()} for neither) */
    public RingStatsClient(TransportSecurity security, Duration requestTimeout) {
        this.eventLoops = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("sr3-stats", true),
                NioIoHandler.newFactory());
        try {
            this.client = new TransportClient(eventLoops, security, 1024 * 1024, requestTimeout);
        } catch (IOException e) {
            eventLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The counters of the node at {@code hostPort}, by name: {@code ringSize}, {@code bytesStored},
     * {@code underReplicatedBlocks}, {@code bytesReReplicated}, {@code repairPending}, ... (see
     * {@link RingNode#stats()}).
     *
     * @throws IOException if the node does not answer within the request timeout
     */
    public Map<String, Long> stats(String hostPort) throws IOException {
        Member member = Member.fromId(hostPort);
        return Payloads.longMap(RingStorage.await(
                client.request(member.address(), MessageType.STATS, new byte[0])).payload());
    }

    @Override
    public void close() {
        client.close();
        eventLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
