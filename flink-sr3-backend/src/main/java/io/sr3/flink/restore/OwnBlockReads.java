package io.sr3.flink.restore;

import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.transport.BlockBuffers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Reads the blocks of a restore that the restoring node holds itself: on the node's I/O threads,
 * {@link RestoreSettings#LOCAL_READS_IN_FLIGHT} at a time, each verified into a buffer lent by the
 * node's {@link BlockBuffers}, and delivered in order on the calling thread.
 */
final class OwnBlockReads {

    private static final Logger LOG = LoggerFactory.getLogger(OwnBlockReads.class);

    /** Takes one verified own block; {@code data} is reused once this returns. */
    @FunctionalInterface
    interface Delivery {
        void deliver(int index, ByteBuffer data) throws IOException;
    }

    /** A read in flight into {@code buffer}, which goes back to the pool once the read is done with. */
    private record Read(ByteBuffer buffer, CompletableFuture<ByteBuffer> result) {}

    private OwnBlockReads() {}

    /**
     * Reads the blocks at {@code indexes} of {@code blocks} from {@code node}'s own store and
     * delivers each that is intact, in the order given.
     *
     * @return whether every one was intact; a damaged or missing copy is logged and left out
     */
    static boolean readInOrder(RingNode node, List<BlockFetch> blocks, List<Integer> indexes, Delivery delivery)
            throws IOException {
        BlockBuffers buffers = node.blockBuffers();
        Deque<Read> reads = new ArrayDeque<>();
        int started = 0;
        boolean allUsable = true;
        try {
            for (int i : indexes) {
                while (started < indexes.size() && reads.size() < RestoreSettings.LOCAL_READS_IN_FLIGHT) {
                    BlockFetch block = blocks.get(indexes.get(started++));
                    ByteBuffer buffer = buffers.acquire(block.length());
                    reads.add(new Read(buffer, node.readOwnBlock(block.key(), block.length(), block.crc32c(), buffer)));
                }
                Read read = reads.poll();
                try {
                    delivery.deliver(i, read.result().join());
                } catch (CompletionException e) {
                    LOG.warn("[{}] local copy of {} unusable ({}); fetching it from a peer",
                            node.self().id(), blocks.get(i).description(), e.getCause().getMessage());
                    allUsable = false;
                } finally {
                    buffers.release(read.buffer());
                }
            }
        } finally {
            // After a failed delivery: a buffer goes back once the read still writing into it is done.
            reads.forEach(read -> read.result().whenComplete((data, error) -> buffers.release(read.buffer())));
        }
        return allUsable;
    }
}
