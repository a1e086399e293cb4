package io.sr3.flink.restore;

import java.io.IOException;

/** Receives the verified blocks of a restore, in any order, on the restoring thread. */
@FunctionalInterface
public interface BlockSink {

    /**
     * @param index the block's position in the list given to the executor
     * @param data its bytes, already checked against length and CRC32C
     */
    void accept(int index, byte[] data) throws IOException;
}
