package io.sr3.flink.pacing;

import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;

/**
 * The highest (or lowest) input rate measured within the last {@code memory}
 * ({@code sr3.pacing.peak-memory}): the highest is what the pacer expects a burst to bring back,
 * the lowest the rate between bursts. Keeps only the samples that can still become the extreme (a
 * monotonic queue), so it stays small however often it is fed.
 */
@NotThreadSafe
final class RateExtreme {

    private record Sample(Instant at, double rate) {}

    private final Duration memory;
    /** +1 for the highest rate, -1 for the lowest: candidates are compared as {@code sign * rate}. */
    private final int sign;
    /** Signed rates strictly decreasing from head to tail; times increasing. */
    private final Deque<Sample> candidates = new ArrayDeque<>();

    private RateExtreme(Duration memory, int sign) {
        this.memory = Objects.requireNonNull(memory, "memory");
        this.sign = sign;
    }

    static RateExtreme highest(Duration memory) {
        return new RateExtreme(memory, 1);
    }

    static RateExtreme lowest(Duration memory) {
        return new RateExtreme(memory, -1);
    }

    void record(Instant at, double rate) {
        while (!candidates.isEmpty() && sign * candidates.peekLast().rate() <= sign * rate) {
            candidates.pollLast();
        }
        candidates.addLast(new Sample(at, rate));
    }

    /** The extreme rate recorded within {@code memory} before {@code now}, or 0 without any. */
    double value(Instant now) {
        Instant oldest = now.minus(memory);
        while (!candidates.isEmpty() && candidates.peekFirst().at().isBefore(oldest)) {
            candidates.pollFirst();
        }
        return candidates.isEmpty() ? 0 : candidates.peekFirst().rate();
    }
}
