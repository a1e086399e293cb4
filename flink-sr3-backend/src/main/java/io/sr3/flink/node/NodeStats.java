package io.sr3.flink.node;

import io.sr3.flink.ring.Membership;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.transport.BlockBuffers;
import io.sr3.flink.transport.TransportServer;

import javax.annotation.concurrent.ThreadSafe;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A node's counters by name, as answered to {@code STATS} requests: the node's own, then those
 * maintenance tasks registered, in name order.
 */
@ThreadSafe
final class NodeStats {

    private final boolean client;
    private final Membership membership;
    private final BlockStore store;
    private final NodeMetrics metrics;
    private final TransportServer server;
    private final BlockBuffers blockBuffers;
    /** Counters computed on demand by maintenance tasks. */
    private final Map<String, LongSupplier> registered = new ConcurrentSkipListMap<>();
    private volatile BooleanSupplier repairPending = () -> false;

    NodeStats(boolean client, Membership membership, BlockStore store, NodeMetrics metrics, TransportServer server,
            BlockBuffers blockBuffers) {
        this.blockBuffers = blockBuffers;
        this.client = client;
        this.membership = membership;
        this.store = store;
        this.metrics = metrics;
        this.server = server;
    }

    Map<String, Long> snapshot() {
        Map<String, Long> stats = new LinkedHashMap<>();
        stats.put("client", client ? 1L : 0L);
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
        stats.put("blockBuffersLent", (long) blockBuffers.lent());
        stats.put("blockBufferHeapFallbacks", blockBuffers.heapFallbacks());
        registered.forEach((name, value) -> stats.put(name, value.getAsLong()));
        return stats;
    }

    void register(String name, LongSupplier value) {
        registered.put(name, value);
    }

    void repairPendingFrom(BooleanSupplier pending) {
        this.repairPending = pending;
    }
}
