package io.sr3.flink.fs;

import io.sr3.flink.node.RingStorage;
import org.apache.flink.core.fs.FSDataInputStream;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.EOFException;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * Reads one file from the ring, a block at a time, verifying every block against the checksum
 * in the manifest and falling back to the next replica when one is missing or corrupt.
 *
 * <p>While a file is read front to back, the next block is already on its way (read-ahead of one
 * block): the transfer of block {@code i + 1} overlaps the reader's work on block {@code i}, as
 * when RocksDB on Flink 1.20 downloads its files through streams. A seek elsewhere drops it.
 */
@NotThreadSafe
final class Sr3InputStream extends FSDataInputStream {

    private final RingStorage storage;
    private final Manifest manifest;
    private final String displayPath;
    private final PrefetchedBlocks prefetched;
    /** Offset of the first byte of each block, plus the file length at the end. */
    private final long[] blockStarts;
    private long position;
    private int currentIndex = -1;
    private byte[] current;
    /** The block after {@link #currentIndex} on its way, or null. */
    @Nullable private CompletableFuture<byte[]> ahead;
    private int aheadIndex = -1;
    private boolean closed;

    Sr3InputStream(RingStorage storage, Manifest manifest, String displayPath, PrefetchedBlocks prefetched) {
        this.storage = storage;
        this.prefetched = prefetched;
        this.manifest = manifest;
        this.displayPath = displayPath;
        this.blockStarts = new long[manifest.blocks().size() + 1];
        for (int i = 0; i < manifest.blocks().size(); i++) {
            blockStarts[i + 1] = blockStarts[i] + manifest.blocks().get(i).length();
        }
    }

    @Override
    public int read() throws IOException {
        if (!positionInBlock()) {
            return -1;
        }
        int value = current[(int) (position - blockStarts[currentIndex])] & 0xFF;
        position++;
        return value;
    }

    @Override
    public int read(byte[] bytes, int offset, int length) throws IOException {
        if (length == 0) {
            return 0;
        }
        int total = 0;
        while (total < length && positionInBlock()) {
            int inBlock = (int) (position - blockStarts[currentIndex]);
            int chunk = Math.min(length - total, current.length - inBlock);
            System.arraycopy(current, inBlock, bytes, offset + total, chunk);
            total += chunk;
            position += chunk;
        }
        return total == 0 ? -1 : total;
    }

    @Override
    public void seek(long desired) throws IOException {
        ensureOpen();
        if (desired < 0 || desired > manifest.length()) {
            throw new EOFException("Cannot seek to " + desired + " in " + displayPath + " of " + manifest.length() + " bytes");
        }
        position = desired;
    }

    @Override
    public long skip(long n) throws IOException {
        long skipped = Math.max(0, Math.min(n, manifest.length() - position));
        position += skipped;
        return skipped;
    }

    @Override
    public long getPos() {
        return position;
    }

    @Override
    public int available() {
        return (int) Math.min(Integer.MAX_VALUE, manifest.length() - position);
    }

    @Override
    public void close() {
        closed = true;
        current = null;
        ahead = null; // its answer is dropped when it comes
    }

    /** Loads the block holding {@link #position}; false at the end of the file. */
    private boolean positionInBlock() throws IOException {
        ensureOpen();
        if (position >= manifest.length()) {
            return false;
        }
        if (currentIndex >= 0 && position >= blockStarts[currentIndex] && position < blockStarts[currentIndex + 1]) {
            return true;
        }
        int index = Arrays.binarySearch(blockStarts, position);
        index = index >= 0 ? index : -index - 2;
        while (manifest.blocks().get(index).length() == 0) {
            index++;
        }
        boolean sequential = index == currentIndex + 1;
        Manifest.BlockRef block = manifest.blocks().get(index);
        byte[] restored = prefetched.take(block.key()); // verified when the restore plan fetched it
        String description = "block " + index + " of " + manifest.blocks().size() + " of " + displayPath;
        if (restored != null) {
            current = restored;
        } else if (ahead != null && aheadIndex == index) {
            current = storage.finishRead(ahead, block.key(), block.length(), block.crc32c(), block.holders(), description);
        } else {
            current = storage.readVerified(block.key(), block.length(), block.crc32c(), block.holders(), description);
        }
        ahead = null;
        currentIndex = index;
        if (sequential) {
            readAhead(index + 1);
        }
        return true;
    }

    /** Starts fetching block {@code index} if there is one with bytes that no restore plan brought. */
    private void readAhead(int index) {
        while (index < manifest.blocks().size() && manifest.blocks().get(index).length() == 0) {
            index++;
        }
        if (index >= manifest.blocks().size()) {
            return;
        }
        Manifest.BlockRef block = manifest.blocks().get(index);
        if (!prefetched.contains(block.key())) {
            ahead = storage.startRead(block.key(), block.length(), block.crc32c(), block.holders());
            aheadIndex = index;
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("Stream of " + displayPath + " is closed");
        }
    }
}
