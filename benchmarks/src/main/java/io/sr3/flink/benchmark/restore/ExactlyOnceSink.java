package io.sr3.flink.benchmark.restore;

import io.sr3.flink.restore.BlockFetch;
import io.sr3.flink.restore.BlockSink;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Checks that a restore delivers every block exactly once with its manifest length, and drops the
 * bytes without copying them: the benchmark measures moving blocks, not keeping them. Contents
 * were already verified against their CRC32C by the relay.
 */
@NotThreadSafe
public final class ExactlyOnceSink implements BlockSink {

    private final List<BlockFetch> blocks;
    private final boolean[] received;
    private int count;

    public ExactlyOnceSink(List<BlockFetch> blocks) {
        this.blocks = blocks;
        this.received = new boolean[blocks.size()];
    }

    @Override
    public void accept(int index, byte[] data) throws IOException {
        check(index, data.length);
    }

    /** Checks the block where it arrived: the default would copy it into a new array first. */
    @Override
    public void accept(int index, ByteBuffer data) throws IOException {
        check(index, data.remaining());
    }

    private void check(int index, int length) throws IOException {
        if (index < 0 || index >= blocks.size()) {
            throw new IOException("Restore delivered block index " + index + " of " + blocks.size());
        }
        if (received[index]) {
            throw new IOException("Restore delivered " + blocks.get(index).description() + " twice");
        }
        if (length != blocks.get(index).length()) {
            throw new IOException("Restore delivered " + blocks.get(index).description() + " with " + length
                    + " bytes, expected " + blocks.get(index).length());
        }
        received[index] = true;
        count++;
    }

    /** Fails unless every block arrived. */
    public void checkComplete() throws IOException {
        if (count != blocks.size()) {
            for (int i = 0; i < received.length; i++) {
                if (!received[i]) {
                    throw new IOException("Restore finished with " + count + " of " + blocks.size() + " blocks; missing "
                            + blocks.get(i).description());
                }
            }
        }
    }
}
