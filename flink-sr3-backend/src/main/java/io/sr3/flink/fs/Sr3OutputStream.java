package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.BlockBuffers;
import io.sr3.flink.transport.Crc32c;
import org.apache.flink.core.fs.FSDataOutputStream;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;

/**
 * Writes one file into the ring: bytes are cut into blocks that are replicated in the background
 * while the writer goes on; {@link #close} waits for every block and then stores the manifest,
 * which is the moment the file appears. A failed block fails the close, and nothing is published.
 *
 * <p>At most {@link #MAX_BLOCKS_IN_FLIGHT} blocks are in transfer at once, which bounds the memory
 * one stream uses to that many blocks plus the one being filled; the fill buffer grows with the
 * data, so a small file costs a small heap buffer, and a file longer than {@link #GROWN_BUFFER_MAX}
 * fills block-sized direct buffers the node reuses ({@link BlockBuffers}; a heap buffer when all
 * are lent): the local replica is written and the remote ones are sent from it without a copy.
 *
 * <p>One thread writes, but Flink cancels a checkpoint by closing its streams from another thread
 * (the task's cleanup) while the snapshot thread may still be writing. Writes, sync and close
 * therefore take the stream's lock: a close publishes exactly the bytes written before it, and
 * later writes fail because the stream is closed.
 */
@ThreadSafe
final class Sr3OutputStream extends FSDataOutputStream {

    static final int MAX_BLOCKS_IN_FLIGHT = 4;

    /** Up to this size the fill buffer grows by doubling; beyond it, a reused block buffer takes over. */
    static final int GROWN_BUFFER_MAX = 256 * 1024;

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final RingNode node;
    private final String path;
    private final String displayPath;
    private final String fileId = UUID.randomUUID().toString();
    private final int blockSize;
    private final BlockBuffers blockBuffers;
    /**
     * A heap buffer that grows up to {@link #GROWN_BUFFER_MAX}, then one of {@link #blockBuffers}
     * (most checkpoint files are far smaller than a block). Filled by absolute puts: its position
     * stays 0, {@link #bufferPosition} is the fill level.
     */
    @GuardedBy("this") private ByteBuffer buffer = EMPTY;
    /**
     * What the path held when the stream was created (a tombstone, a file; null if nothing): still
     * being looked up while an exclusive create's stream is written.
     */
    private final CompletableFuture<ManifestStore.Versions> lookup;
    private final PathManifests pathManifests;
    /** Whether the manifest may only be stored if no other writer created the path meanwhile (NO_OVERWRITE). */
    private final boolean exclusive;
    /** The copies of each block the file asks for, or {@link Manifest#RING_DEFAULT}. */
    private final int copies;
    private final Semaphore inFlight = new Semaphore(MAX_BLOCKS_IN_FLIGHT);
    @GuardedBy("this") private final List<CompletableFuture<Manifest.BlockRef>> blocks = new ArrayList<>();
    @GuardedBy("this") private int bufferPosition;
    @GuardedBy("this") private long position;
    @GuardedBy("this") private boolean closed;
    /** Set by {@link #abandon}: the close deletes what was written instead of publishing it. */
    private volatile boolean abandoned;
    /** Completed by {@link #abandon}: ends a publishing close's wait for the path's lookup and the blocks. */
    private final CompletableFuture<Void> abandonment = new CompletableFuture<>();

    /**
     * @param lookup what the ring held under the path when the stream was created (null if
     *     nothing): the new manifest's generation is higher, and a file in it is replaced; the
     *     stream fails once the lookup says the path may not be written ({@link
     *     PathManifests#checkCreatable}), at the latest at close, before anything is published
     * @param exclusive whether the close fails if another writer created the path, before the
     *     stream or meanwhile
     * @param copies the copies of each block the file asks for (its operator's replication plan),
     *     or {@link Manifest#RING_DEFAULT} for the replication factor
     */
    Sr3OutputStream(RingNode node, String path, String displayPath, CompletableFuture<ManifestStore.Versions> lookup,
            PathManifests pathManifests, boolean exclusive, int copies) {
        this.node = node;
        this.path = path;
        this.displayPath = displayPath;
        this.lookup = lookup;
        this.pathManifests = pathManifests;
        this.exclusive = exclusive;
        this.copies = copies;
        this.blockSize = node.config().blockSize();
        this.blockBuffers = node.blockBuffers();
    }

    @Override
    public synchronized void write(int b) throws IOException {
        ensureOpen();
        ensureRoom(1);
        buffer.put(bufferPosition++, (byte) b);
        position++;
        if (bufferPosition == blockSize) {
            sendBlock();
        }
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
        ensureOpen();
        while (length > 0) {
            ensureRoom(Math.min(length, blockSize - bufferPosition));
            int chunk = Math.min(length, blockSize - bufferPosition);
            buffer.put(bufferPosition, bytes, offset, chunk);
            bufferPosition += chunk;
            position += chunk;
            offset += chunk;
            length -= chunk;
            if (bufferPosition == blockSize) {
                sendBlock();
            }
        }
    }

    /**
     * Grows the buffer so that {@code bytes} more fit (at most the block size's worth): doubling
     * up to {@link #GROWN_BUFFER_MAX} (a heap buffer), then into a block buffer of the node's.
     */
    private void ensureRoom(int bytes) {
        int needed = bufferPosition + bytes;
        if (needed <= buffer.capacity()) {
            return;
        }
        int doubled = Math.max(Math.max(needed, 4096), buffer.capacity() * 2);
        if (doubled <= Math.min(GROWN_BUFFER_MAX, blockSize)) {
            buffer = ByteBuffer.wrap(Arrays.copyOf(buffer.array(), doubled));
        } else {
            ByteBuffer block = blockBuffers.acquire(blockSize);
            block.put(0, buffer, 0, bufferPosition);
            buffer = block;
        }
    }

    @Override
    public synchronized long getPos() {
        return position;
    }

    /** Nothing to do: bytes become visible as a whole when the stream closes. */
    @Override
    public void flush() {}

    /** Replicates everything written so far (cutting a short block) and waits until it is stored. */
    @Override
    public synchronized void sync() throws IOException {
        ensureOpen();
        sendBlock();
        awaitBlocks();
    }

    /**
     * Makes the coming {@link #close} abandon the file: nothing is published, and the blocks sent
     * are deleted in the background once their writes settled. Flink cancels a checkpoint by
     * closing its streams and then deleting their files; without this, the close would store the
     * file at quorum and the delete take it back, both on the thread that reports the task's
     * failure. Takes no lock, so that it never waits for a writer, and ends what waits for
     * holders (for a slow or unreachable one, up to the request timeout): a write waiting for one
     * of the in-flight slots fails, and so does a close publishing the file that has not started
     * storing its manifest, which then publishes nothing. Once the stream closed, it changes
     * nothing.
     */
    void abandon() {
        abandoned = true;
        inFlight.release(MAX_BLOCKS_IN_FLIGHT); // no block is sent after this, so the slots no longer count
        abandonment.complete(null);
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (abandoned) {
            blockBuffers.release(buffer);
            buffer = EMPTY;
            discard(null, null, 0, null);
            return;
        }
        CompletableFuture<List<Member>> manifestWrite = null;
        byte[] encoded = null;
        long generation = 0;
        Manifest replaced = null;
        try {
            try {
                sendBlock();
            } finally {
                blockBuffers.release(buffer); // what followed a full last block, or what an interrupt left; heap ones are ignored
                buffer = EMPTY;
            }
            ManifestStore.Versions observed = awaitUnlessAbandoned(lookup);
            pathManifests.checkCreatable(observed, path, exclusive);
            replaced = PathManifests.live(observed);
            List<Manifest.BlockRef> refs = awaitBlocks();
            if (abandoned) {
                throw abandonedException("Stopped publishing ");
            }
            long now = System.currentTimeMillis();
            generation = Manifest.nextGeneration(observed == null ? 0 : observed.newest().generation(), now);
            Manifest manifest = Manifest.file(path, generation, now, position, refs, copies);
            if (exclusive) {
                new ManifestStore(node).create(manifest, observed, displayPath); // takes its own copies back if it fails
            } else {
                encoded = manifest.encode();
                manifestWrite = node.storage().write(NamespaceKeys.manifestKey(path), ByteBuffer.wrap(encoded),
                        Crc32c.of(encoded), false,
                        manifest.manifestCopies(node.config().replicationFactor()), null);
                RingStorage.await(manifestWrite);
            }
        } catch (FileAlreadyExistsException e) {
            discard(null, null, generation, null);
            throw e;
        } catch (IOException | RuntimeException e) {
            discard(manifestWrite, encoded, generation, replaced);
            throw new IOException("Could not write " + displayPath + " to the sr3 ring: " + e.getMessage(), e);
        }
        if (replaced != null) {
            for (Manifest.BlockRef block : replaced.blocks()) {
                node.storage().deleteOn(block.key(), block.holders());
            }
        }
    }

    private void sendBlock() throws IOException {
        if (bufferPosition == 0) {
            return;
        }
        if (lookup.isDone() && !lookup.isCompletedExceptionally()) {
            // Fails early, before more blocks are sent, when the path turned out to be taken.
            pathManifests.checkCreatable(lookup.join(), path, exclusive);
        }
        // Wait for a slot before taking the bytes out of the buffer: Flink interrupts a cancelled
        // snapshot's thread here, and the bytes must then stay where close() will find them.
        try {
            inFlight.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("Interrupted while writing " + displayPath);
        }
        if (abandoned) {
            inFlight.release();
            throw abandonedException("Stopped writing ");
        }
        // Hand the buffer over instead of copying it out: a block buffer goes back to the pool once
        // every copy is stored, and a full block is followed by another block buffer, a partial one
        // (a sync, the last block) by a heap buffer that grows again.
        ByteBuffer data = buffer;
        int length = bufferPosition;
        buffer = length == blockSize ? blockBuffers.acquire(blockSize) : EMPTY;
        bufferPosition = 0;
        ByteBuffer bytes = data.duplicate().position(0).limit(length);
        String key = NamespaceKeys.blockKey(fileId, blocks.size());
        CRC32C crc = new CRC32C();
        crc.update(bytes.duplicate());
        int checksum = (int) crc.getValue();
        int wanted = copies == Manifest.RING_DEFAULT ? node.config().replicationFactor() : copies;
        // The write runs release only when every copy was acknowledged; after a failed copy a
        // transfer may still read the buffer, so the pool forgets it instead of lending it again.
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            released.set(true);
            blockBuffers.release(data);
        };
        CompletableFuture<Manifest.BlockRef> block = node.storage()
                .write(key, bytes, checksum, true, wanted, release)
                .thenApply((List<Member> holders) -> new Manifest.BlockRef(key, length, checksum, holders));
        block.whenComplete((ref, error) -> {
            if (!released.get()) {
                blockBuffers.abandon(data);
            }
            inFlight.release();
        });
        blocks.add(block);
    }

    private List<Manifest.BlockRef> awaitBlocks() throws IOException {
        List<Manifest.BlockRef> refs = new ArrayList<>(blocks.size());
        for (CompletableFuture<Manifest.BlockRef> block : blocks) {
            refs.add(awaitUnlessAbandoned(block));
        }
        return refs;
    }

    /** Waits for {@code future} as {@link RingStorage#await} does, but fails at once if the stream is abandoned meanwhile. */
    private <T> T awaitUnlessAbandoned(CompletableFuture<T> future) throws IOException {
        RingStorage.await(CompletableFuture.anyOf(future, abandonment));
        if (!future.isDone()) {
            throw abandonedException("Stopped waiting for the holders of ");
        }
        return RingStorage.await(future);
    }

    private IOException abandonedException(String what) {
        return new IOException(what + displayPath + ": the stream was abandoned (its checkpoint was cancelled)");
    }

    /**
     * Deletes what a failed close wrote: the blocks, including those still in flight, and the
     * manifest if its write was started. A write can still land after the close failed (Flink
     * interrupts a cancelled checkpoint's thread while it waits), so each delete runs once its
     * write has settled, on the thread that completes the write: a network thread, where the
     * delete must not wait (it would wait for an answer only that thread can read). Copies of a
     * failed manifest are taken back only where the key still holds them, so another writer's
     * manifest of the path is never deleted. A manifest that would have replaced an existing file
     * is not deleted (that would delete the file): the replaced manifest is stored again above the
     * failed one's generation, so copies of the failed one that landed cannot shadow it.
     */
    private void discard(@Nullable CompletableFuture<List<Member>> manifestWrite, @Nullable byte[] encoded,
            long failedGeneration, @Nullable Manifest replaced) {
        String key = NamespaceKeys.manifestKey(path);
        if (manifestWrite != null && replaced == null) {
            manifestWrite.handle((holders, error) -> {
                new ManifestStore(node).putBack(key, encoded, null, null);
                return null;
            });
        } else if (manifestWrite != null) {
            byte[] restored = replaced.withBlocks(replaced.blocks(), failedGeneration + 1).encode();
            manifestWrite.handle((holders, error) -> node.storage().write(key, restored, false));
        }
        for (CompletableFuture<Manifest.BlockRef> block : blocks) {
            block.thenCompose(ref -> node.storage().deleteOnAsync(ref.key(), ref.holders()));
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("Stream to " + displayPath + " is closed");
        }
    }
}
