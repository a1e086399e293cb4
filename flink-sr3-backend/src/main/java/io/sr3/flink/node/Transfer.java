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
 * @param elapsed request to answer, less what the peer said it spent writing the block to its store
 * @param concurrent transfers with that peer in flight while this one ran, itself included: they
 *     shared the link, so {@code bytes * concurrent / elapsed} estimates what it carries
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

    /**
     * A transfer as its sender or receiver timed it.
     *
     * @param elapsedNanos request to answer
     * @param peerNanos how much of that the peer said it spent on its own work (its store write),
     *     not the link's; at most half of {@code elapsedNanos} is taken off, so that a wrong answer
     *     can at most double the rate the transfer stands for
     * @param inFlightAtStart transfers with the peer in flight when it started, itself included
     * @param inFlightAtEnd the same when it ended: the fewer of the two counts, as the count at
     *     the start alone credits it with transfers that ended just after it began
     */
    static Transfer measured(String peer, Direction direction, long bytes, long elapsedNanos, long peerNanos,
            int inFlightAtStart, int inFlightAtEnd) {
        long onTheLink = elapsedNanos - Math.min(Math.max(0, peerNanos), elapsedNanos / 2);
        return new Transfer(peer, direction, bytes, Duration.ofNanos(onTheLink),
                Math.max(1, Math.min(inFlightAtStart, inFlightAtEnd)));
    }
}
