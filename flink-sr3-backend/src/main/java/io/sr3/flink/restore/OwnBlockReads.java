package io.sr3.flink.restore;

import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.transport.BlockBuffers;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.List;

/**
 * Reads the blocks of a restore that the restoring node holds itself, while the network fetches
 * the others: on the node's I/O threads, {@link RestoreSettings#LOCAL_READS_IN_FLIGHT} at a time,
 * each verified into a buffer lent by the node's {@link BlockBuffers}. Every read ends in one
 * {@link Arrival}, which the restore takes from the same queue as its fetches' answers, so neither
 * waits for the other.
 */
@NotThreadSafe
final class OwnBlockReads {

    /** Where a read ends, on an I/O thread: the verified block in a lent buffer, or why there is none. */
    @FunctionalInterface
    interface Arrival {
        void arrived(int index, @Nullable ByteBuffer data, @Nullable Throwable error);
    }

    private final RingNode node;
    private final List<BlockFetch> blocks;
    private final Deque<Integer> queue;
    private final Arrival arrival;
    private int inFlight;

    OwnBlockReads(RingNode node, List<BlockFetch> blocks, Collection<Integer> indexes, Arrival arrival) {
        this.node = node;
        this.blocks = blocks;
        this.queue = new ArrayDeque<>(indexes);
        this.arrival = arrival;
    }

    /** Starts reads until {@link RestoreSettings#LOCAL_READS_IN_FLIGHT} run or none is left to start. */
    void fill() {
        BlockBuffers buffers = node.blockBuffers();
        while (inFlight < RestoreSettings.LOCAL_READS_IN_FLIGHT && !queue.isEmpty()) {
            int index = queue.poll();
            BlockFetch block = blocks.get(index);
            ByteBuffer buffer = buffers.acquire(block.length());
            inFlight++;
            node.readOwnBlock(block.key(), block.length(), block.crc32c(), buffer).whenComplete((data, error) -> {
                if (error != null) {
                    buffers.release(buffer);
                }
                arrival.arrived(index, data, error);
            });
        }
    }

    /** The restore took one read's arrival. */
    void taken() {
        inFlight--;
    }

    /** Reads started and not yet taken. */
    int inFlight() {
        return inFlight;
    }

    /** Whether every read was started and taken. */
    boolean finished() {
        return inFlight == 0 && queue.isEmpty();
    }
}
