package io.sr3.flink.node;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;

import javax.annotation.concurrent.ThreadSafe;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads of one ring node, each pool with one job, so that none can starve another:
 *
 * <pre>
 *   network     Netty event loops: frames in and out, never a blocking call
 *   io          this node's own store operations (a request addressed to itself skips the network)
 *   requests    peers' requests, bounded: a flood is answered BUSY instead of queueing without end
 *   detector    one thread: the failure detector's rounds
 *   maintenance one thread: repair, scrub and sweep, which block on ring I/O, one task at a time
 * </pre>
 *
 * <p>Tests pass their own executors through the constructor.
 */
@ThreadSafe
final class NodeThreads {

    private static final int IO_THREADS = 4;
    /** Requests waiting for a request thread before new ones are answered BUSY. */
    static final int MAX_QUEUED_REQUESTS = 1024;

    final EventLoopGroup network;
    final ExecutorService io;
    final ExecutorService requests;
    final ScheduledExecutorService detector;
    final ScheduledExecutorService maintenance;

    NodeThreads(EventLoopGroup network, ExecutorService io, ExecutorService requests,
            ScheduledExecutorService detector, ScheduledExecutorService maintenance) {
        this.network = network;
        this.io = io;
        this.requests = requests;
        this.detector = detector;
        this.maintenance = maintenance;
    }

    /** The production pools: daemon threads named {@code sr3-*}. */
    static NodeThreads create() {
        return new NodeThreads(
                new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("sr3-netty", true), NioIoHandler.newFactory()),
                Executors.newFixedThreadPool(IO_THREADS, new DefaultThreadFactory("sr3-io", true)),
                new ThreadPoolExecutor(IO_THREADS, IO_THREADS, 0, TimeUnit.MILLISECONDS,
                        new ArrayBlockingQueue<>(MAX_QUEUED_REQUESTS), new DefaultThreadFactory("sr3-requests", true)),
                Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sr3-detector", true)),
                Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sr3-maintenance", true)));
    }

    /** Whether the calling thread is one of the network threads, which must never block. */
    boolean onNetworkThread() {
        for (EventExecutor loop : network) {
            if (loop.inEventLoop()) {
                return true;
            }
        }
        return false;
    }

    /** Runs {@code task} on a network thread (for tests of what must not block there). */
    CompletableFuture<Void> runOnNetworkThread(Runnable task) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        network.next().execute(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        return done;
    }

    /** Stops every pool; running tasks are interrupted. */
    void shutdown() {
        detector.shutdownNow();
        maintenance.shutdownNow();
        io.shutdownNow();
        requests.shutdownNow();
        network.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
