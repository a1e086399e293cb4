package io.sr3.flink.node;

import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

/**
 * Samples what one direction of one link delivers, the way BBR samples a path's delivery rate:
 * a transfer that completes stands for the bytes of every transfer completed since the last
 * completion before it started (or since its start, if the link was idle then), over that
 * interval. Blocks on one connection arrive one after another, so a count of transfers in flight
 * says little about the share of the link each had (a small block queued behind a large one
 * would seem to share it); the bytes delivered over an interval do not depend on it.
 */
@ThreadSafe
final class DeliveryRate {

    @GuardedBy("this")
    private int inFlight;

    @GuardedBy("this")
    private long delivered;

    /** The last completion, or the start of the current busy period if that is later. */
    @GuardedBy("this")
    private long deliveredAtNanos;

    /** What a transfer remembers of the link when it starts. */
    record Start(long delivered, long deliveredAtNanos, boolean alone) {}

    /**
     * One sample: {@code bytes} delivered over {@code nanos}.
     *
     * @param alone whether the link was idle when the completing transfer started, so that the
     *     interval is that transfer's own time, request to answer
     */
    record Sample(long bytes, long nanos, boolean alone) {}

    synchronized Start start(long now) {
        if (inFlight++ == 0) {
            deliveredAtNanos = now;
        }
        return new Start(delivered, deliveredAtNanos, inFlight == 1);
    }

    synchronized Sample complete(Start start, long bytes, long now) {
        inFlight--;
        delivered += bytes;
        deliveredAtNanos = now;
        return new Sample(delivered - start.delivered, now - start.deliveredAtNanos, start.alone);
    }

    synchronized void fail() {
        inFlight--;
    }
}
