package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The direct buffers a node's restores read its own blocks into, reused from one block to the
 * next: a block is read, verified and written to its file from one of them, with no block-sized
 * heap array (at 4 MiB a G1 humongous object, whose churn costs a TaskManager collections in the
 * middle of its restore). At most {@link #BUFFERS} exist per node, shared by the restores running
 * on it, each as large as the node's block size.
 */
@ThreadSafe
public final class OwnBlockBuffers {

    /** Buffers per node: as many as a restore keeps own-block reads in flight. */
    static final int BUFFERS = RestoreExecutor.LOCAL_READS_IN_FLIGHT;

    private final int bufferBytes;
    private final BlockingQueue<ByteBuffer> free = new ArrayBlockingQueue<>(BUFFERS);
    private final AtomicInteger created = new AtomicInteger();

    OwnBlockBuffers(int bufferBytes) {
        if (bufferBytes <= 0) {
            throw new IllegalArgumentException("Need a positive buffer size, was " + bufferBytes);
        }
        this.bufferBytes = bufferBytes;
    }

    /** The node's buffers, created on first use, sized to its block size. */
    public static OwnBlockBuffers of(RingNode node) {
        return node.attachment(OwnBlockBuffers.class, n -> new OwnBlockBuffers(n.config().blockSize()));
    }

    /** Bytes each buffer holds: blocks larger than this (written under another block size) are read the old way. */
    int bufferBytes() {
        return bufferBytes;
    }

    /** A free buffer, a new one while fewer than {@link #BUFFERS} exist, else null. */
    @Nullable
    ByteBuffer tryAcquire() {
        ByteBuffer buffer = free.poll();
        if (buffer != null) {
            return buffer;
        }
        if (created.getAndUpdate(n -> n < BUFFERS ? n + 1 : n) < BUFFERS) {
            return ByteBuffer.allocateDirect(bufferBytes);
        }
        return null;
    }

    /** Waits for a buffer another restore on this node gives back. */
    ByteBuffer acquire() throws InterruptedIOException {
        ByteBuffer buffer = tryAcquire();
        try {
            while (buffer == null) {
                buffer = free.poll(100, TimeUnit.MILLISECONDS);
                if (buffer == null) {
                    buffer = tryAcquire();
                }
            }
            return buffer;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("Interrupted while waiting for a buffer to read an own block into");
        }
    }

    /** Gives a buffer back; its content is no longer needed. */
    void release(ByteBuffer buffer) {
        buffer.clear();
        if (!free.offer(buffer)) {
            throw new IllegalStateException("More buffers released than this pool of " + BUFFERS + " holds");
        }
    }
}
