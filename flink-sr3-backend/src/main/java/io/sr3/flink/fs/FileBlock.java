package io.sr3.flink.fs;

import io.sr3.flink.ring.Member;

import java.util.List;
import java.util.Objects;

/**
 * One block of an {@code sr3://} file as its manifest records it, for tools that check replicas
 * ({@code io.sr3.flink.tools.Sr3Admin fsck}).
 *
 * @param key the block's key in every holder's store
 * @param offset where the block starts in the file
 * @param length the block's length in bytes
 * @param crc32c the CRC32C of the block's bytes
 * @param holders the nodes that acknowledged it, at their current addresses
 */
public record FileBlock(String key, long offset, int length, int crc32c, List<Member> holders) {

    public FileBlock {
        Objects.requireNonNull(key, "key");
        holders = List.copyOf(holders);
    }
}
