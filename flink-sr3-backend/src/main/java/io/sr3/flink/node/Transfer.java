package io.sr3.flink.node;

import java.time.Duration;
import java.util.Objects;

/**
 * What the link between this node and a peer delivered, one direction, sampled when a block read
 * from the peer or sent to it completed ({@link DeliveryRate}): the bytes of every block completed
 * over an interval that ends with this one.
 *
 * @param peer the peer's id
 * @param direction whether the blocks came from the peer or went to it
 * @param bytes the bytes delivered over the interval
 * @param elapsed the interval, without what the peer said it spent writing to its store
 */
public record Transfer(String peer, Direction direction, long bytes, Duration elapsed) {

    /** Which way the blocks went. */
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
        if (bytes < 0) {
            throw new IllegalArgumentException("Need bytes >= 0, was " + bytes);
        }
    }

    /**
     * The transfer one delivery-rate sample stands for.
     *
     * @param peerNanos how much of the completing block's time the peer said it spent on its own
     *     work (its store write), not the link's. Taken off only when that block had the link to
     *     itself from its start (with blocks queued behind each other, the peer's write of one
     *     overlaps the next one's bytes), and at most half of the interval, so that a wrong answer
     *     can at most double the rate
     */
    static Transfer measured(String peer, Direction direction, DeliveryRate.Sample sample, long peerNanos) {
        long own = sample.alone() ? Math.min(Math.max(0, peerNanos), sample.nanos() / 2) : 0;
        return new Transfer(peer, direction, sample.bytes(), Duration.ofNanos(sample.nanos() - own));
    }
}
