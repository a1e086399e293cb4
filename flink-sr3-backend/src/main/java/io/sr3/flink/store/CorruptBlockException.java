package io.sr3.flink.store;

import java.io.IOException;
import java.nio.file.Path;

/** A stored block failed verification; it is never served, another replica must be used. */
public class CorruptBlockException extends IOException {

    private static final long serialVersionUID = 1L;

    public CorruptBlockException(String key, Path directory, String why) {
        super("Block " + key + " in " + directory + " is corrupt: " + why);
    }
}
