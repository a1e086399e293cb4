package io.sr3.flink.restore;

import java.time.Duration;
import java.util.Objects;

/**
 * What a network path is measured to deliver: sustained bytes per second and round-trip time.
 *
 * @param bytesPerSecond sustained throughput of one stream on this path, > 0
 * @param roundTrip round-trip time, >= 0
 */
public record Link(double bytesPerSecond, Duration roundTrip) {

    public Link {
        Objects.requireNonNull(roundTrip, "roundTrip");
        if (!(bytesPerSecond > 0) || Double.isInfinite(bytesPerSecond)) {
            throw new IllegalArgumentException("bytesPerSecond must be positive and finite, was " + bytesPerSecond);
        }
        if (roundTrip.isNegative()) {
            throw new IllegalArgumentException("roundTrip must not be negative, was " + roundTrip);
        }
    }

    double seconds(long bytes) {
        return bytes / bytesPerSecond;
    }

    double roundTripSeconds() {
        return roundTrip.toNanos() / 1e9;
    }
}
