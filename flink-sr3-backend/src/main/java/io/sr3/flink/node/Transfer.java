package io.sr3.flink.node;

import java.time.Duration;
import java.util.Objects;

/**
 * One block that crossed the link between this node and a peer: a block read from the peer
 * (request to the last byte of the answer) or one sent to it (request to its acknowledgement, so
 * the peer's store write is included).
 *
 * @param peer the peer's id
 * @param direction whether the block came from the peer or went to it
 * @param bytes the block's size
 * @param elapsed request to answer
 * @param concurrent transfers with that peer in flight when this one started, itself included:
 *     they shared the link, so {@code bytes * concurrent / elapsed} estimates what it carries
 */
public record Transfer(String peer, Direction direction, long bytes, Duration elapsed, int concurrent) {

    /** Which way the block went. */
    public enum Direction {
        /** From the peer to this node. */
        RECEIVED,
        /** From this node to the peer. */
        SENT
    }

    public Transfer {
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(direction, "direction");
        Objects.requireNonNull(elapsed, "elapsed");
        if (bytes < 0 || concurrent < 1) {
            throw new IllegalArgumentException("Need bytes >= 0 and concurrent >= 1, was " + bytes + ", " + concurrent);
        }
    }
}
