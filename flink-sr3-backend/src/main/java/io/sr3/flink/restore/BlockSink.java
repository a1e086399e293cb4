package io.sr3.flink.restore;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Receives the verified blocks of a restore, in any order, on the restoring thread. */
@FunctionalInterface
public interface BlockSink {

    /**
     * @param index the block's position in the list given to the executor
     * @param data its bytes, already checked against length and CRC32C
     */
    void accept(int index, byte[] data) throws IOException;

    /**
     * A block read into a buffer the executor reuses once this returns: a sink that writes it out
     * (to a file, say) overrides this to do so without a copy; by default it is copied into an array.
     *
     * @param data the block's bytes between its position and limit, already checked against
     *     length and CRC32C; its content is valid only until this returns
     */
    default void accept(int index, ByteBuffer data) throws IOException {
        byte[] copy = new byte[data.remaining()];
        data.duplicate().get(copy);
        accept(index, copy);
    }
}
