package io.sr3.flink.store;

import java.io.IOException;
import java.nio.file.Path;

/** A node does not hold the block that was asked for. */
public class BlockNotFoundException extends IOException {

    private static final long serialVersionUID = 1L;

    public BlockNotFoundException(String key, Path directory) {
        super("Block " + key + " is not in the store " + directory);
    }
}
