package io.sr3.flink.transport;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * The direct buffers (each a block and its frame's overhead) a node lends to the blocks it moves: received in answers
 * ({@link TransportClient#requestBlock}) and PUTs, read from its store to be served, and filled
 * by its output streams; reused from one block to the next. A 4 MiB block in a new heap array is
 * a G1 humongous object on every node it passes (a TaskManager in the middle of a restore then
 * spends its time in collections), and the transport copies a heap block into direct memory
 * before the socket takes it.
 *
 * <p>At most {@code maxBuffers} exist. When all are lent, or a block is larger than they are, a
 * heap buffer is handed out instead: the block moves as it did before, nothing waits. A buffer
 * is given back with {@link #release} once its content is no longer needed (written to a file,
 * written to a socket); releasing anything the pool did not lend, or releasing twice, does
 * nothing, so a caller may release every buffer it got from a frame without knowing where it
 * came from.
 */
@ThreadSafe
public final class BlockBuffers {

    /** Blocks shorter than this get heap arrays: cheap to allocate, never a humongous object. */
    public static final int MIN_POOLED_BYTES = 64 * 1024;

    private final int bufferBytes;
    private final int maxBuffers;
    private final ArrayDeque<ByteBuffer> free = new ArrayDeque<>();
    private final Set<ByteBuffer> lent = Collections.newSetFromMap(new IdentityHashMap<>());
    private int created;
    private long heapFallbacks;

    public BlockBuffers(int bufferBytes, int maxBuffers) {
        if (bufferBytes <= 0 || maxBuffers < 0) {
            throw new IllegalArgumentException("Need a positive buffer size and a non-negative count, were "
                    + bufferBytes + " and " + maxBuffers);
        }
        this.bufferBytes = bufferBytes;
        this.maxBuffers = maxBuffers;
    }

    /**
     * A buffer for {@code length} bytes, its position 0 and its limit {@code length}: one of the
     * pool's direct buffers if one is free or may still be created and the block is large enough
     * to be worth one, else a new heap buffer.
     */
    public synchronized ByteBuffer acquire(int length) {
        if (length < 0) {
            throw new IllegalArgumentException("Negative length " + length);
        }
        if (length < MIN_POOLED_BYTES || length > bufferBytes) {
            return ByteBuffer.allocate(length);
        }
        ByteBuffer buffer = free.poll();
        if (buffer == null) {
            if (created == maxBuffers) {
                heapFallbacks++;
                return ByteBuffer.allocate(length);
            }
            buffer = ByteBuffer.allocateDirect(bufferBytes);
            created++;
        }
        lent.add(buffer);
        buffer.clear().limit(length);
        return buffer;
    }

    /** Takes back a buffer {@link #acquire} lent; returns false (and does nothing) for any other buffer or null. */
    public synchronized boolean release(@Nullable ByteBuffer buffer) {
        if (!lent.remove(buffer)) {
            return false;
        }
        free.push(buffer);
        return true;
    }

    /**
     * Stops tracking a buffer {@link #acquire} lent whose user cannot tell when the last reader
     * is done with it (a replica write that failed while another transfer may still send it): it
     * is never lent again, the garbage collector frees it once nothing references it, and the
     * pool may create a new one in its place. Does nothing for any other buffer or null.
     */
    public synchronized void abandon(@Nullable ByteBuffer buffer) {
        if (lent.remove(buffer)) {
            created--;
        }
    }

    /** The capacity of each direct buffer: longer blocks get heap buffers. */
    public int bufferBytes() {
        return bufferBytes;
    }

    /** Direct buffers created so far (at most the maximum). */
    public synchronized int created() {
        return created;
    }

    /** Direct buffers lent and not yet given back. */
    public synchronized int lent() {
        return lent.size();
    }

    /** Blocks that got a heap buffer because every direct one was lent. */
    public synchronized long heapFallbacks() {
        return heapFallbacks;
    }
}
