package io.sr3.flink.node;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.sr3.flink.restore.NetworkView;
import io.sr3.flink.restore.RestoreStats;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.MemberCodec;
import io.sr3.flink.ring.Membership;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.store.NodeIdentity;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.Frame;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;
import io.sr3.flink.transport.RelayRequest;
import io.sr3.flink.transport.TransportClient;
import io.sr3.flink.transport.TransportServer;
import org.apache.flink.annotation.VisibleForTesting;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One storage node of the ring: a Netty server over a local {@link BlockStore}, a client to the
 * other nodes, and a failure detector that keeps {@link Membership} current.
 *
 * <p>Threads: one Netty event loop group (network only), an I/O pool that serves disk requests
 * and local operations, and one scheduler thread for the failure detector. Operations addressed
 * to this node itself skip the network and run on the I/O pool.
 */
@ThreadSafe
public final class RingNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RingNode.class);
    private static final int IO_THREADS = 4;
    /** Requests waiting for an I/O thread before new ones are answered BUSY. */
    static final int MAX_QUEUED_REQUESTS = 1024;

    private final NodeConfig config;
    private final Member self;
    private final Membership membership;
    private final BlockStore store;
    /** The persistent id and lock of this node's store directory; null for a client, which stores nothing. */
    @Nullable private final NodeIdentity identity;
    private final EventLoopGroup eventLoops;
    /** Runs this node's own store operations. */
    private final ExecutorService ioExecutor;
    /** Serves peers' requests. */
    private final ExecutorService requestExecutor;
    private final ScheduledExecutorService scheduler;
    /** Runs background upkeep (replica repair) that does blocking ring I/O, one task at a time. */
    private final ScheduledExecutorService maintenance;
    private final Set<String> maintenanceTasks = ConcurrentHashMap.newKeySet();
    /** Counters computed on demand by maintenance tasks, added to {@link #stats()}. */
    private final Map<String, LongSupplier> extraStats = new ConcurrentSkipListMap<>();
    private volatile BooleanSupplier repairPending = () -> false;
    private final TransportServer server;
    private final TransportClient client;
    private final FailureDetector failureDetector;
    private final RingStorage storage;
    private final NodeMetrics metrics = new NodeMetrics();
    private final NetworkView networkView = new NetworkView();
    private final RestoreStats restoreStats = new RestoreStats();
    private final AtomicBoolean closed = new AtomicBoolean();

    private RingNode(NodeConfig config) throws IOException {
        this.config = config;
        this.eventLoops = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("sr3-netty", true), NioIoHandler.newFactory());
        this.ioExecutor = Executors.newFixedThreadPool(IO_THREADS, new DefaultThreadFactory("sr3-io", true));
        // Bounded: a flood of peers' requests is answered BUSY instead of queueing without end.
        this.requestExecutor = new ThreadPoolExecutor(IO_THREADS, IO_THREADS, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(MAX_QUEUED_REQUESTS), new DefaultThreadFactory("sr3-requests", true));
        this.scheduler = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sr3-detector", true));
        this.maintenance = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sr3-maintenance", true));
        TransportServer boundServer = null;
        NodeIdentity identity = null;
        try {
            requireAuthenticationAcrossMachines(config);
            this.failureDetector = new FailureDetector(this, System::nanoTime);
            NodeRequestHandler handler = new NodeRequestHandler(this, failureDetector);
            boundServer = TransportServer.start(eventLoops, config.host(), config.ports().iterator(), config.security(),
                    config.limits(), config.maxFrameSize(), handler, requestExecutor);
            this.server = boundServer;
            int port = server.address().getPort();
            Path storeDir = config.storeDirectory() != null
                    ? config.storeDirectory()
                    : Paths.get(System.getProperty("java.io.tmpdir"), "sr3-store", config.host() + "_" + port);
            if (config.role() == RingRole.CLIENT) {
                this.identity = null;
                this.self = new Member(config.host(), port, config.zone()); // never a member: no identity to keep
            } else {
                identity = NodeIdentity.open(storeDir, config.durability().clusterId());
                this.identity = identity;
                this.self = new Member(identity.nodeId(), config.host(), port, config.zone());
            }
            this.store = new BlockStore(storeDir, config.fsync(), config.storeMaxBytes());
            // A client is never a member: not even of its own placement snapshot.
            this.membership = new Membership(config.role() == RingRole.CLIENT ? null : self, config.virtualNodes());
            this.client = new TransportClient(eventLoops, config.security(), config.maxFrameSize(), config.requestTimeout());
            this.storage = new RingStorage(this);
        } catch (IOException | RuntimeException e) {
            if (boundServer != null) {
                boundServer.close();
            }
            if (identity != null) {
                identity.close();
            }
            shutdownThreads();
            throw e;
        }
    }

    /**
     * Refuses an unauthenticated node that other machines can reach, unless the user asked for one
     * ({@code sr3.transport.authentication: none}).
     */
    private static void requireAuthenticationAcrossMachines(NodeConfig config) throws IOException {
        if (config.security().authenticates() || config.security().unauthenticatedAllowed()) {
            return;
        }
        InetAddress address = InetAddress.getByName(config.host());
        if (!address.isLoopbackAddress()) {
            throw new IOException("The sr3 ring node would listen on " + config.host() + ", reachable from other "
                    + "machines, without authentication: enable TLS (security.ssl.internal.enabled with its keystore "
                    + "and truststore, which the ring follows) or set sr3.transport.secret on every node; to run an "
                    + "unauthenticated ring anyway, set sr3.transport.authentication: none");
        }
    }

    /**
     * Starts a node, registers it in this JVM's {@link LocalRing} and runs one failure-detector
     * round so that reachable peers are members before the first write.
     */
    public static RingNode start(NodeConfig config) throws IOException {
        RingNode node = new RingNode(config);
        if (!config.security().authenticates()) {
            LOG.warn("[{}] sr3 ring node started WITHOUT authentication: any process that reaches {} can read and "
                    + "write checkpoint blocks. Enable TLS (security.ssl.internal.enabled) or set sr3.transport.secret "
                    + "on every node.", node.self.id(), node.self.id());
        } else {
            LOG.info("[{}] ring connections: {}", node.self.id(), config.security());
        }
        LOG.info("[{}] sr3 ring node started as {} (this process: {}, main class '{}'): store {} ({} bytes present), "
                + "replication factor {}, write quorum {}, block size {}, seeds {}", node.self.id(),
                config.role().name().toLowerCase(), ProcessRole.detect().name().toLowerCase(), ProcessRole.mainClass(),
                node.store.directory(), node.store.bytesStored(), config.replicationFactor(),
                config.durability().minReplicas(), config.blockSize(), config.seeds());
        LocalRing.register(node);
        node.failureDetector.runRound().join();
        int members = node.membership().members().size();
        if (!config.seeds().isEmpty() && members < config.durability().minReplicas()) {
            LOG.warn("[{}] the ring has {} storage member(s) so far, fewer than sr3.ring.min-replicas ({}): checkpoint "
                    + "files fail until more TaskManagers join", node.self.id(), members,
                    config.durability().minReplicas());
        }
        node.scheduler.scheduleWithFixedDelay(() -> node.failureDetector.runRound(),
                config.pingInterval().toMillis(), config.pingInterval().toMillis(), TimeUnit.MILLISECONDS);
        return node;
    }

    /** Whether the calling thread is one of this node's network (event loop) threads, which must never block. */
    boolean onNetworkThread() {
        for (EventExecutor loop : eventLoops) {
            if (loop.inEventLoop()) {
                return true;
            }
        }
        return false;
    }

    /** Runs {@code task} on one of this node's network threads (for tests of what must not block there). */
    @VisibleForTesting
    CompletableFuture<Void> runOnNetworkThread(Runnable task) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        eventLoops.next().execute(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        return done;
    }

    public Member self() {
        return self;
    }

    public NodeConfig config() {
        return config;
    }

    public Membership membership() {
        return membership;
    }

    public BlockStore store() {
        return store;
    }

    /** Replicated reads and writes through the ring. */
    public RingStorage storage() {
        return storage;
    }

    public NodeMetrics metrics() {
        return metrics;
    }

    /** What this node has measured about the links towards it, for restore planning. */
    public NetworkView networkView() {
        return networkView;
    }

    /** The restores this node has run, for metrics. */
    public RestoreStats restoreStats() {
        return restoreStats;
    }

    TransportClient client() {
        return client;
    }

    /** Delays the answers this node receives as if they crossed shaped links. For tests and benchmarks only. */
    public void shapeInboundLinks(io.sr3.flink.transport.LinkShaper shaper) {
        client.shapeWith(shaper);
    }

    /** Peers refused because they failed the shared-secret handshake. */
    public long refusedHandshakes() {
        return server.refusedHandshakes();
    }

    public boolean isRunning() {
        return !closed.get();
    }

    /** Whether this node only reads and writes through the ring ({@code sr3.ring.role: client}). */
    public boolean isClient() {
        return config.role() == RingRole.CLIENT;
    }

    /**
     * Runs the task {@code taskFactory} makes every {@code interval} on this node's maintenance
     * thread, once per name: a second call with the same name does nothing (and makes no task). Tasks may block on ring I/O; they never run
     * concurrently with each other. An exception is logged and the task runs again next time.
     *
     * @return whether the task was scheduled by this call
     */
    public boolean scheduleMaintenance(String name, Supplier<Runnable> taskFactory, Duration interval) {
        if (closed.get() || !maintenanceTasks.add(name)) {
            return false;
        }
        Runnable task = taskFactory.get();
        maintenance.scheduleWithFixedDelay(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.warn("[{}] {} failed; will run again in {} ms", self.id(), name, interval.toMillis(), e);
            }
        }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return true;
    }

    /** This node's counters by name, as answered to {@code STATS} requests. */
    public Map<String, Long> stats() {
        Map<String, Long> stats = new LinkedHashMap<>();
        stats.put("client", isClient() ? 1L : 0L);
        stats.put("ringSize", (long) membership.members().size());
        stats.put("bytesStored", store.bytesStored());
        stats.put("bytesWritten", metrics.bytesWritten.get());
        stats.put("bytesRead", metrics.bytesRead.get());
        stats.put("bytesReadRemote", metrics.bytesReadRemote.get());
        stats.put("replicaFallbacks", metrics.replicaFallbacks.get());
        stats.put("underReplicatedWrites", metrics.underReplicatedWrites.get());
        stats.put("failedWrites", metrics.failedWrites.get());
        stats.put("corruptManifests", metrics.corruptManifests.get());
        stats.put("suspectedMembers", (long) membership.suspected().size());
        stats.put("underReplicatedBlocks", metrics.underReplicatedBlocks.get());
        stats.put("blocksReReplicated", metrics.blocksReReplicated.get());
        stats.put("bytesReReplicated", metrics.bytesReReplicated.get());
        stats.put("repairScans", metrics.repairScans.get());
        stats.put("orphanBlocksSwept", metrics.orphanBlocksSwept.get());
        stats.put("orphanBytesSwept", metrics.orphanBytesSwept.get());
        stats.put("surplusBlocksTrimmed", metrics.surplusBlocksTrimmed.get());
        stats.put("repairPending", repairPending.getAsBoolean() ? 1L : 0L);
        stats.put("openConnections", (long) server.openConnections());
        stats.put("refusedHandshakes", server.refusedHandshakes());
        stats.put("refusedConnections", server.refusedConnections());
        stats.put("busyAnswers", server.busyAnswers());
        extraStats.forEach((name, value) -> stats.put(name, value.getAsLong()));
        return stats;
    }

    /** Adds a counter computed on demand to {@link #stats()}, e.g. an audit by a maintenance task. */
    public void registerStat(String name, LongSupplier value) {
        extraStats.put(name, value);
    }

    /**
     * Set by the repair task: answers, at the moment {@link #stats()} asks, whether membership
     * changed since its last scan that found nothing to repair. Asked rather than pushed, so a
     * member loss shows as pending at once and not only when the next scan starts.
     */
    public void reportRepairPendingFrom(BooleanSupplier pending) {
        this.repairPending = pending;
    }

    // ------------------------------------------------------------------ single-node primitives

    /** Stores a block on one node. */
    public CompletableFuture<Void> put(Member target, String key, byte[] data) {
        return put(target, key, data, Crc32c.of(data));
    }

    /** Stores a block whose CRC32C the caller computed already (see {@link BlockStore#put(String, byte[], int)}). */
    public CompletableFuture<Void> put(Member target, String key, byte[] data, int crc32c) {
        if (target.sameNode(self)) {
            return local(() -> {
                store.put(key, data, crc32c);
                return null;
            });
        }
        return client.request(target.address(), Payloads.putBlock(key, data, crc32c), config.requestTimeout())
                .thenApply(f -> null);
    }

    /**
     * Replaces a value on one node only if it holds {@code expected} (null: nothing) or already
     * the replacement (null: delete); see {@link BlockStore#compareAndPut}.
     */
    public CompletableFuture<BlockStore.Swap> compareAndPut(Member target, String key, @Nullable byte[] expected,
            @Nullable byte[] replacement) {
        if (target.sameNode(self)) {
            return local(() -> store.compareAndPut(key, expected, replacement));
        }
        return client.request(target.address(), MessageType.COMPARE_AND_PUT,
                        Payloads.compareAndPut(key, expected, replacement))
                .thenApply(f -> new BlockStore.Swap(Payloads.swapped(f.payload()), Payloads.swapFound(f.payload())));
    }

    /** Reads a verified block from one node. */
    public CompletableFuture<byte[]> get(Member target, String key) {
        if (target.sameNode(self)) {
            return local(() -> store.get(key));
        }
        return client.request(target.address(), MessageType.GET_BLOCK, Payloads.utf8(key)).thenApply(Frame::payload);
    }

    /**
     * Reads a block from one node and checks that it is the content a manifest expects, by
     * comparing the checksum the node's store verified, or the frame decoder computed, with the
     * expected one (no second pass over the bytes).
     *
     * @throws IOException (in the future) if the node has no intact copy of that content
     */
    public CompletableFuture<byte[]> getVerified(Member target, String key, int length, int crc32c) {
        if (target.sameNode(self)) {
            return local(() -> store.get(key, length, crc32c));
        }
        return client.request(target.address(), MessageType.GET_BLOCK, Payloads.utf8(key)).thenApply(answer -> {
            String problem = RingStorage.check(answer, length, crc32c);
            if (problem != null) {
                throw new CompletionException(new IOException("block " + key + " from " + target.id()
                        + " is not the expected content: " + problem));
            }
            return answer.block();
        });
    }

    /** Deletes a block on one node; a missing block is not an error. */
    public CompletableFuture<Void> delete(Member target, String key) {
        if (target.sameNode(self)) {
            return local(() -> {
                store.delete(key);
                return null;
            });
        }
        return client.request(target.address(), MessageType.DELETE_BLOCK, Payloads.utf8(key)).thenApply(f -> null);
    }

    /** Lists the keys one node holds under a prefix. */
    public CompletableFuture<List<String>> list(Member target, String prefix) {
        if (target.sameNode(self)) {
            return local(() -> store.keys(prefix));
        }
        return client.request(target.address(), MessageType.LIST_KEYS, Payloads.utf8(prefix))
                .thenApply(f -> Payloads.stringList(f.payload()));
    }

    /**
     * Fetches a block along a relay route (see {@link MessageType#RELAY_BLOCK}): from this node's
     * store when the route is empty, otherwise through the first hop. The answer is verified
     * against the length and CRC32C of the request before it is returned, so a corrupt block
     * stops here and is never passed on.
     *
     * @throws RelayException (in the future) when a hop could not be reached, or it or anything
     *     behind it failed; its code says why
     */
    public CompletableFuture<byte[]> relay(RelayRequest request) {
        RelayException refused = NodeRequestHandler.refusedRoute(request, membership);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        List<String> route = request.route();
        if (!route.isEmpty() && route.get(0).equals(self.id())) {
            return relay(request.next()); // a route through this node itself costs nothing
        }
        if (route.isEmpty()) {
            // The store verifies the block and compares its checksum with the request's: no second pass here.
            return local(() -> store.get(request.key(), request.length(), request.crc32c()))
                    .exceptionally(error -> {
                        throw new CompletionException(RelayException.from(unwrap(error), request.key(), self.id(), self.id()));
                    });
        }
        Member hop = Member.fromId(route.get(0));
        String source = hop.id();
        Duration deadline = config.requestTimeout().multipliedBy(route.size());
        return client.request(hop.address(), MessageType.RELAY_BLOCK, request.next().encode(), deadline)
                .handle((answer, error) -> {
                    if (error != null) {
                        throw new CompletionException(RelayException.from(unwrap(error), request.key(), source, self.id()));
                    }
                    String problem = RingStorage.check(answer, request.length(), request.crc32c());
                    if (problem != null) {
                        throw new CompletionException(new RelayException(ErrorCode.CORRUPT, "block " + request.key()
                                + " from " + source + " failed verification at " + self.id() + ": " + problem));
                    }
                    return answer.block();
                });
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /** Whether {@code peer} answers a probe within {@code deadline}; never completes exceptionally. */
    public CompletableFuture<Boolean> answers(Member peer, Duration deadline) {
        if (peer.sameNode(self) || peer.id().equals(self.id())) {
            return CompletableFuture.completedFuture(isRunning());
        }
        return ping(peer.address(), deadline).handle((members, error) -> error == null);
    }

    /** Probes a peer; the answer is its live member list, itself first. */
    CompletableFuture<List<Member>> ping(InetSocketAddress peer, Duration deadline) {
        byte[] sender = isClient() ? new byte[0] : MemberCodec.encode(self);
        return client.request(peer, MessageType.PING, sender, deadline)
                .thenApply(f -> MemberCodec.decodeList(f.payload()));
    }

    private <T> CompletableFuture<T> local(LocalOperation<T> operation) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            ioExecutor.execute(() -> {
                try {
                    result.complete(operation.run());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(new IOException("sr3 ring node " + self + " is stopped", e));
        }
        return result;
    }

    @FunctionalInterface
    private interface LocalOperation<T> {
        T run() throws Exception;
    }

    // ------------------------------------------------------------------ lifecycle

    /** Stops serving and leaves the JVM registry. Blocks stay on disk. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        LocalRing.unregister(this);
        server.close();
        client.close();
        shutdownThreads();
        if (identity != null) {
            try {
                identity.close();
            } catch (IOException e) {
                LOG.warn("[{}] could not release the store directory {}: {}", self.id(), store.directory(), e.toString());
            }
        }
        LOG.info("[{}] sr3 ring node stopped", self.id());
    }

    private void shutdownThreads() {
        scheduler.shutdownNow();
        maintenance.shutdownNow();
        ioExecutor.shutdownNow();
        requestExecutor.shutdownNow();
        eventLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        return "RingNode[" + (self == null ? "starting" : self) + "]";
    }
}
