package io.sr3.flink.store;

import java.io.IOException;
import java.nio.file.Path;

/** Storing a block would take a node's store over its limit ({@code sr3.store.max-size}); nothing was written. */
public class StoreFullException extends IOException {

    private static final long serialVersionUID = 1L;

    public StoreFullException(String key, long bytes, long stored, long limit, Path directory) {
        super(String.format("sr3 store %s is full: block %s (%d bytes) would bring it to %d bytes, over "
                + "sr3.store.max-size %d bytes; the block was not stored", directory, key, bytes, stored + bytes, limit));
    }
}
