package io.sr3.flink.node;

import javax.annotation.concurrent.ThreadSafe;

import java.util.concurrent.atomic.AtomicLong;

/** Counters of one ring node, read by the Flink metric gauges and the demo. */
@ThreadSafe
public final class NodeMetrics {

    /** Blocks acknowledged by fewer replicas than the replication factor asked for. */
    public final AtomicLong underReplicatedWrites = new AtomicLong();
    /** Writes refused because fewer nodes than the write quorum acknowledged them. */
    public final AtomicLong failedWrites = new AtomicLong();
    /** Copies deleted by the orphan sweep because the manifest lists enough live holders without this node. */
    public final AtomicLong surplusBlocksTrimmed = new AtomicLong();
    /** Manifest keys with a copy that could not be decoded, each counted once by repair and once by the orphan sweep. */
    public final AtomicLong corruptManifests = new AtomicLong();
    /** Reads that had to skip a missing, corrupt or unreachable replica. */
    public final AtomicLong replicaFallbacks = new AtomicLong();
    /** Bytes this node sent to the ring as block writes (all replicas counted). */
    public final AtomicLong bytesWritten = new AtomicLong();
    /** Bytes this node read from the ring, local replicas included. */
    public final AtomicLong bytesRead = new AtomicLong();
    /** Of {@link #bytesRead}, the bytes that came from another node. */
    public final AtomicLong bytesReadRemote = new AtomicLong();
    /**
     * Blocks this node is responsible for repairing that had fewer live replicas than the
     * replication factor at the end of its latest repair scan (0 once the factor holds again).
     */
    public final AtomicLong underReplicatedBlocks = new AtomicLong();
    /** Block replicas this node copied to new holders after a member left. */
    public final AtomicLong blocksReReplicated = new AtomicLong();
    /** Bytes of {@link #blocksReReplicated}. */
    public final AtomicLong bytesReReplicated = new AtomicLong();
    /** Blocks no manifest referenced, deleted after the grace period. */
    public final AtomicLong orphanBlocksSwept = new AtomicLong();
    /** Bytes of {@link #orphanBlocksSwept}. */
    public final AtomicLong orphanBytesSwept = new AtomicLong();
    /** Completed repair scans. */
    public final AtomicLong repairScans = new AtomicLong();
    /** Blocks of this node's store that the scrubber found damaged and moved aside. */
    public final AtomicLong corruptBlocksFound = new AtomicLong();
    /** Blocks the scrubber verified (header and CRC32C of the data). */
    public final AtomicLong blocksScrubbed = new AtomicLong();
    /** Bytes of {@link #blocksScrubbed}. */
    public final AtomicLong bytesScrubbed = new AtomicLong();
    /** Replicas that a manifest lists but whose holder answered a repair check that it has no intact copy. */
    public final AtomicLong missingReplicasFound = new AtomicLong();
    /**
     * Blocks of files this node repairs of which no recorded holder had an intact copy at its
     * latest repair check, and no other node either: lost unless a holder that is away returns.
     */
    public final AtomicLong lostBlocks = new AtomicLong();
}
