package io.sr3.flink.fs;

import io.sr3.flink.node.RingStorage;
import org.apache.flink.core.fs.FSDataInputStream;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.EOFException;
import java.io.IOException;
import java.util.Arrays;

/**
 * Reads one file from the ring, a block at a time, verifying every block against the checksum
 * in the manifest and falling back to the next replica when one is missing or corrupt.
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
        Manifest.BlockRef block = manifest.blocks().get(index);
        byte[] restored = prefetched.take(block.key()); // verified when the restore plan fetched it
        current = restored != null ? restored : storage.readVerified(block.key(), block.length(), block.crc32c(), block.holders(),
                "block " + index + " of " + manifest.blocks().size() + " of " + displayPath);
        currentIndex = index;
        return true;
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("Stream of " + displayPath + " is closed");
        }
    }
}
