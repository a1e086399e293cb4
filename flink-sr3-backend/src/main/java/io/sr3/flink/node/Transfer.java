package io.sr3.flink.node;

import java.time.Duration;
import java.util.Objects;

/**
 * One block this node read from a peer: the request to the last byte of the answer.
 *
 * @param peer the peer's id
 * @param bytes the block's size
 * @param elapsed request to answer
 * @param concurrent transfers with that peer in flight when this one started, itself included:
 *     they shared the link, so {@code bytes * concurrent / elapsed} estimates what it carries
 */
public record Transfer(String peer, long bytes, Duration elapsed, int concurrent) {

    public Transfer {
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(elapsed, "elapsed");
        if (bytes < 0 || concurrent < 1) {
            throw new IllegalArgumentException("Need bytes >= 0 and concurrent >= 1, was " + bytes + ", " + concurrent);
        }
    }
}
