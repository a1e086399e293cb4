package io.sr3.flink.restore;

import java.util.List;
import java.util.Objects;

/**
 * One block a restore needs and the live nodes that hold an intact replica of it.
 *
 * @param key the block key
 * @param bytes the block's size
 * @param holders node ids holding a replica, in the manifest's preference order; never empty
 */
public record BlockSource(String key, long bytes, List<String> holders) {

    public BlockSource {
        Objects.requireNonNull(key, "key");
        holders = List.copyOf(holders);
        if (bytes < 0) {
            throw new IllegalArgumentException("Block " + key + " has negative size " + bytes);
        }
        if (holders.isEmpty()) {
            throw new IllegalArgumentException("Block " + key + " has no live holder");
        }
    }
}
