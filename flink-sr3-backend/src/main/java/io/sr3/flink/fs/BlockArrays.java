package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;

import javax.annotation.concurrent.ThreadSafe;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The block-sized heap arrays a node's output streams fill, reused from one block to the next: a
 * 4 MiB array is a G1 humongous object in any heap below 32 GiB, and one per written block makes
 * a small TaskManager heap collect over and over while it checkpoints. A stream gives an array
 * back once every replica's write of its block was acknowledged, so no transport reads it any
 * more; an array whose write failed anywhere is left to the garbage collector.
 */
@ThreadSafe
final class BlockArrays {

    /** Free arrays kept: what one stream has in flight and fills. */
    static final int MAX_FREE = Sr3OutputStream.MAX_BLOCKS_IN_FLIGHT + 1;

    private final int blockSize;
    private final Deque<byte[]> free = new ArrayDeque<>();

    BlockArrays(int blockSize) {
        this.blockSize = blockSize;
    }

    /** The arrays of {@code node}'s streams: one pool per node, so per process in a TaskManager. */
    static BlockArrays of(RingNode node) {
        return node.attachment(BlockArrays.class, n -> new BlockArrays(n.config().blockSize()));
    }

    /** A free array of the block size, or a new one; its content is whatever its last block left. */
    synchronized byte[] acquire() {
        byte[] array = free.poll();
        return array != null ? array : new byte[blockSize];
    }

    /** Takes an array back for reuse; nothing may read or write it afterwards. Other sizes are ignored. */
    synchronized void release(byte[] array) {
        if (array.length == blockSize && free.size() < MAX_FREE) {
            free.push(array);
        }
    }
}
