package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.transport.RelayRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Reads the blocks of a restore that the restoring node holds itself: on the node's I/O threads,
 * {@link RestoreExecutor#LOCAL_READS_IN_FLIGHT} at a time, each verified into one of the node's
 * {@link OwnBlockBuffers} (a block larger than those into an array of its own), and delivered in
 * order on the calling thread.
 */
final class OwnBlockReads {

    private static final Logger LOG = LoggerFactory.getLogger(OwnBlockReads.class);

    /** Takes one verified own block; {@code data} is reused once this returns. */
    @FunctionalInterface
    interface Delivery {
        void deliver(int index, ByteBuffer data) throws IOException;
    }

    /** A read in flight, into {@code buffer} (null: into an array of its own). */
    private record Read(@Nullable ByteBuffer buffer, CompletableFuture<ByteBuffer> result) {
        void release(OwnBlockBuffers buffers) {
            if (buffer != null) {
                buffers.release(buffer);
            }
        }
    }

    private OwnBlockReads() {}

    /**
     * Reads the blocks at {@code indexes} of {@code blocks} from {@code node}'s own store and
     * delivers each that is intact, in the order given.
     *
     * @return whether every one was intact; a damaged or missing copy is logged and left out
     */
    static boolean readInOrder(RingNode node, List<BlockFetch> blocks, List<Integer> indexes, Delivery delivery)
            throws IOException {
        OwnBlockBuffers buffers = OwnBlockBuffers.of(node);
        Deque<Read> reads = new ArrayDeque<>();
        int started = 0;
        boolean allUsable = true;
        try {
            for (int i : indexes) {
                while (started < indexes.size() && reads.size() < RestoreExecutor.LOCAL_READS_IN_FLIGHT) {
                    Read read = start(node, blocks.get(indexes.get(started)), buffers, reads.isEmpty());
                    if (read == null) {
                        break; // every buffer is taken (by another restore): deliver what is in flight first
                    }
                    reads.add(read);
                    started++;
                }
                Read read = reads.poll();
                try {
                    delivery.deliver(i, read.result().join());
                } catch (CompletionException e) {
                    LOG.warn("[{}] local copy of {} unusable ({}); fetching it from a peer",
                            node.self().id(), blocks.get(i).description(), e.getCause().getMessage());
                    allUsable = false;
                } finally {
                    read.release(buffers);
                }
            }
        } finally {
            // After a failed delivery: a buffer goes back once the read still writing into it is done.
            reads.forEach(read -> read.result().whenComplete((data, error) -> read.release(buffers)));
        }
        return allUsable;
    }

    /** Starts a read into a free buffer; waits for one if {@code mustStart}, else returns null when none is free. */
    @Nullable
    private static Read start(RingNode node, BlockFetch block, OwnBlockBuffers buffers, boolean mustStart)
            throws IOException {
        if (block.length() > buffers.bufferBytes()) {
            return new Read(null, node.relay(new RelayRequest(block.key(), block.length(), block.crc32c(), List.of())));
        }
        ByteBuffer buffer = mustStart ? buffers.acquire() : buffers.tryAcquire();
        if (buffer == null) {
            return null;
        }
        return new Read(buffer, node.readOwnBlock(block.key(), block.length(), block.crc32c(), buffer));
    }
}
