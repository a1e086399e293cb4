package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.Membership;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.store.NodeIdentity;
import io.sr3.flink.transport.BlockBuffers;
import io.sr3.flink.transport.CipherWarmUp;
import io.sr3.flink.transport.LinkShaper;
import io.sr3.flink.transport.MeasuredLink;
import io.sr3.flink.transport.RelayRequest;
import io.sr3.flink.transport.TransportClient;
import io.sr3.flink.transport.TransportServer;
import org.apache.flink.annotation.VisibleForTesting;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One node of the ring, the facade the rest of flink-sr3 uses. It wires its parts and owns their
 * lifecycle:
 *
 * <pre>
 *   peers --frames--> TransportServer --> NodeRequestHandler --> BlockStore (this node's disk)
 *                                                            `-> FailureDetector (a PING's claim)
 *   RingStorage (replicated reads, writes) --> PeerClient --> TransportClient --> peers
 *                                                         `-> BlockStore (a request to itself)
 *   FailureDetector (every ping interval) --> PeerClient.ping --> Membership
 *   NodeMaintenance (one thread): BlockScrubber and the tasks of {@link NodeExtension}s
 *   NodeThreads: network, io, requests, detector, maintenance
 * </pre>
 *
 * <p>A client node ({@code sr3.ring.role: client}) stores nothing and is never a member.
 */
@ThreadSafe
public final class RingNode implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RingNode.class);

    private final NodeConfig config;
    private final NodeThreads threads;
    private final Member self;
    private final Membership membership;
    private final BlockStore store;
    /** The persistent id and lock of this node's store directory; null for a client, which stores nothing. */
    @Nullable private final NodeIdentity identity;
    private final TransportServer server;
    private final TransportClient transport;
    private final PeerClient peers;
    private final FailureDetector failureDetector;
    private final RingStorage storage;
    private final NodeMetrics metrics = new NodeMetrics();
    private final NodeStats stats;
    private final NodeMaintenance maintenance;
    private final LinkObservations links = new LinkObservations();
    private final Map<Class<?>, Object> attachments = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** A node on the given threads and clock, not started yet: {@link #start(NodeConfig)} is the way in. */
    RingNode(NodeConfig config, NodeThreads threads, LongSupplier nanoClock) throws IOException {
        this.config = config;
        this.threads = threads;
        TransportServer boundServer = null;
        NodeIdentity identity = null;
        try {
            this.failureDetector = new FailureDetector(this, nanoClock);
            // Room for a whole block frame, so that a sealed one is opened where it was received.
            BlockBuffers blockBuffers = new BlockBuffers(config.blockSize() + NodeConfig.BLOCK_FRAME_OVERHEAD,
                    config.restore().blockBuffers());
            boundServer = new NodeRequestHandler(this, failureDetector).listen(config, threads, blockBuffers);
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
            this.membership = new Membership(isClient() ? null : self, config.virtualNodes());
            if (config.security().authenticates() && config.role() != RingRole.CLIENT) {
                CipherWarmUp.startOnce(); // sealed frames and TLS records are both AES-GCM
            }
            this.transport = new TransportClient(threads.network, config.security(), config.maxFrameSize(),
                    config.requestTimeout(), blockBuffers);
            this.peers = new PeerClient(self, config, store, membership, transport, blockBuffers, threads.io,
                    this::isRunning, nanoClock, links::transfer);
            this.storage = new RingStorage(this);
            this.stats = new NodeStats(isClient(), membership, store, metrics, server, blockBuffers);
            this.maintenance = new NodeMaintenance(self.id(), threads.maintenance, this::isRunning);
        } catch (IOException | RuntimeException e) {
            if (boundServer != null) {
                boundServer.close();
            }
            if (identity != null) {
                identity.close();
            }
            threads.shutdown();
            throw e;
        }
    }

    /**
     * Starts a node, registers it in this JVM's {@link LocalRing}, runs one failure-detector
     * round so that reachable peers are members before the first write, then starts the periodic
     * rounds, a storage node's block scrubber (if {@code sr3.scrub.bandwidth} is positive) and
     * every {@link NodeExtension} on the class path.
     */
    public static RingNode start(NodeConfig config) throws IOException {
        return start(config, NodeThreads.create(), System::nanoTime, NodeExtension.onClassPath());
    }

    @VisibleForTesting
    static RingNode start(NodeConfig config, NodeThreads threads, LongSupplier nanoClock,
            List<NodeExtension> extensions) throws IOException {
        RingNode node = new RingNode(config, threads, nanoClock);
        node.logStart();
        LocalRing.register(node);
        node.failureDetector.runRound().join();
        int members = node.membership.members().size();
        if (!config.seeds().isEmpty() && members < config.durability().minReplicas()) {
            LOG.warn("[{}] the ring has {} storage member(s) so far, fewer than sr3.ring.min-replicas ({}): checkpoint "
                    + "files fail until more TaskManagers join", node.self.id(), members,
                    config.durability().minReplicas());
        }
        node.failureDetector.scheduleRounds(threads.detector, config.pingInterval());
        if (!node.isClient() && config.durability().scrubBandwidth() > 0) {
            node.scheduleMaintenance(BlockScrubber.TASK_NAME, () -> new BlockScrubber(node), BlockScrubber.TICK);
        }
        for (NodeExtension extension : extensions) {
            extension.started(node);
        }
        return node;
    }

    private void logStart() {
        if (!config.security().authenticates()) {
            LOG.warn("[{}] sr3 ring node started WITHOUT authentication: any process that reaches {} can read and "
                    + "write checkpoint blocks. Enable TLS (security.ssl.internal.enabled) or set sr3.transport.secret "
                    + "on every node.", self.id(), self.id());
        } else {
            LOG.info("[{}] ring connections: {}", self.id(), config.security());
        }
        LOG.info("[{}] sr3 ring node started as {} (this process: {}, main class '{}'): store {} ({} bytes present), "
                + "replication factor {}, write quorum {}, block size {}, seeds {}", self.id(),
                config.role().name().toLowerCase(), ProcessRole.detect().name().toLowerCase(), ProcessRole.mainClass(),
                store.directory(), store.bytesStored(), config.replicationFactor(),
                config.durability().minReplicas(), config.blockSize(), config.seeds());
    }

    /** Whether the calling thread is one of this node's network (event loop) threads, which must never block. */
    boolean onNetworkThread() {
        return threads.onNetworkThread();
    }

    /** Runs {@code task} on one of this node's network threads (for tests of what must not block there). */
    @VisibleForTesting
    CompletableFuture<Void> runOnNetworkThread(Runnable task) {
        return threads.runOnNetworkThread(task);
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

    TransportClient client() {
        return transport;
    }

    PeerClient peers() {
        return peers;
    }

    /**
     * The one {@code type} instance that a layer above keeps per node (the restore layer's view of
     * the network, its statistics), made by {@code factory} on first use. Lets those layers keep
     * state with the node without the node knowing their types.
     */
    public <T> T attachment(Class<T> type, Function<RingNode, ? extends T> factory) {
        return type.cast(attachments.computeIfAbsent(type, t -> factory.apply(this)));
    }

    /** Round trips and block transfers this node observes, and the links it reports to peers. */
    public LinkObservations links() {
        return links;
    }

    /** Delays the answers this node receives as if they crossed shaped links. For tests and benchmarks only. */
    public void shapeInboundLinks(LinkShaper shaper) {
        transport.shapeWith(shaper);
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
     * thread, once per name: a second call with the same name does nothing (and makes no task).
     * Tasks may block on ring I/O; they never run concurrently with each other. An exception is
     * logged and the task runs again next time.
     *
     * @return whether the task was scheduled by this call
     */
    public boolean scheduleMaintenance(String name, Supplier<Runnable> taskFactory, Duration interval) {
        return maintenance.schedule(name, taskFactory, interval);
    }

    /** This node's counters by name, as answered to {@code STATS} requests. */
    public Map<String, Long> stats() {
        return stats.snapshot();
    }

    /** Adds a counter computed on demand to {@link #stats()}, e.g. an audit by a maintenance task. */
    public void registerStat(String name, LongSupplier value) {
        stats.register(name, value);
    }

    /**
     * Set by the repair task: answers, at the moment {@link #stats()} asks, whether membership
     * changed since its last scan that found nothing to repair. Asked rather than pushed, so a
     * member loss shows as pending at once and not only when the next scan starts.
     */
    public void reportRepairPendingFrom(BooleanSupplier pending) {
        stats.repairPendingFrom(pending);
    }

    // ------------------------------------------------------------------ single-node primitives (see PeerClient)

    /** Stores a block on one node. */
    public CompletableFuture<Void> put(Member target, String key, byte[] data) {
        return peers.put(target, key, data);
    }

    /** Stores a block whose CRC32C the caller computed already (see {@link BlockStore#put(String, byte[], int)}). */
    public CompletableFuture<Void> put(Member target, String key, byte[] data, int crc32c) {
        return peers.put(target, key, ByteBuffer.wrap(data), crc32c);
    }

    /**
     * Stores the bytes between {@code data}'s position and limit (which stay) as a block; the
     * caller must not change them until the put completes.
     */
    public CompletableFuture<Void> put(Member target, String key, ByteBuffer data, int crc32c) {
        return peers.put(target, key, data, crc32c);
    }

    /**
     * Replaces a value on one node only if it holds {@code expected} (null: nothing) or already
     * the replacement (null: delete); see {@link BlockStore#compareAndPut}.
     */
    public CompletableFuture<BlockStore.Swap> compareAndPut(Member target, String key, @Nullable byte[] expected,
            @Nullable byte[] replacement) {
        return peers.compareAndPut(target, key, expected, replacement);
    }

    /** Reads a verified block from one node. */
    public CompletableFuture<byte[]> get(Member target, String key) {
        return peers.get(target, key);
    }

    /**
     * Reads a block from one node and checks it is the content a manifest expects (by the checksum
     * its store verified or the frame decoder computed); fails with an IOException if not.
     */
    public CompletableFuture<byte[]> getVerified(Member target, String key, int length, int crc32c) {
        return peers.getVerified(target, key, length, crc32c);
    }

    /** Reads one of this node's own blocks into {@code target} on its I/O threads ({@link BlockStore#readInto}). */
    public CompletableFuture<ByteBuffer> readOwnBlock(String key, int length, int crc32c, ByteBuffer target) {
        return peers.readOwnBlock(key, length, crc32c, target);
    }

    /** Deletes a block on one node; a missing block is not an error. */
    public CompletableFuture<Void> delete(Member target, String key) {
        return peers.delete(target, key);
    }

    /** Lists the keys one node holds under a prefix. */
    public CompletableFuture<List<String>> list(Member target, String prefix) {
        return peers.list(target, prefix);
    }

    /**
     * Fetches a block along a relay route (see {@link io.sr3.flink.transport.MessageType#RELAY_BLOCK}):
     * from this node's store when the route is empty, otherwise through the first hop, verified
     * against the request's length and CRC32C, so a corrupt block stops here.
     *
     * @return the block (position to limit) in a buffer the caller gives back to {@link #blockBuffers}
     * @throws RelayException (in the future) when a hop could not be reached, or it or anything
     *     behind it failed; its code says why
     */
    public CompletableFuture<ByteBuffer> relay(RelayRequest request) {
        return peers.relay(request);
    }

    /** The direct buffers relayed and PUT blocks arrive in and relays read this node's blocks into; see {@link BlockBuffers}. */
    public BlockBuffers blockBuffers() {
        return peers.blockBuffers();
    }

    /** Whether {@code peer} answers a probe within {@code deadline}; never completes exceptionally. */
    public CompletableFuture<Boolean> answers(Member peer, Duration deadline) {
        return peers.answers(peer, deadline);
    }

    /** The links {@code peer} measured from its own transfers; fails if it does not answer within {@code deadline}. */
    public CompletableFuture<List<MeasuredLink>> measuredLinks(Member peer, Duration deadline) {
        return peers.measuredLinks(peer, deadline);
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
        transport.close();
        threads.shutdown();
        if (identity != null) {
            try {
                identity.close();
            } catch (IOException e) {
                LOG.warn("[{}] could not release the store directory {}: {}", self.id(), store.directory(), e.toString());
            }
        }
        LOG.info("[{}] sr3 ring node stopped", self.id());
    }

    @Override
    public String toString() {
        return "RingNode[" + (self == null ? "starting" : self) + "]";
    }
}
