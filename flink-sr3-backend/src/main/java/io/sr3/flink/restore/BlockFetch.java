package io.sr3.flink.restore;

import io.sr3.flink.ring.Member;

import java.util.List;
import java.util.Objects;

/**
 * One block a restore must bring to this node, as its manifest describes it.
 *
 * @param key the block key
 * @param length its length in bytes
 * @param crc32c its checksum
 * @param holders the nodes that acknowledged it, in the manifest's order
 * @param description what the block is, for logs and errors ("block 3 of 12 of sr3:///...")
 */
public record BlockFetch(String key, int length, int crc32c, List<Member> holders, String description) {

    public BlockFetch {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(description, "description");
        holders = List.copyOf(holders);
    }
}
