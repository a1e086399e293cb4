package io.sr3.flink.pacing;

import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;

/**
 * The highest input rate measured within the last {@code memory} ({@code sr3.pacing.peak-memory}):
 * what the pacer expects a burst to bring back. Keeps only the samples that can still become the
 * maximum (a monotonic queue), so it stays small however often it is fed.
 */
@NotThreadSafe
final class PeakRate {

    private record Sample(Instant at, double rate) {}

    private final Duration memory;
    /** Rates strictly decreasing from head to tail; times increasing. */
    private final Deque<Sample> candidates = new ArrayDeque<>();

    PeakRate(Duration memory) {
        this.memory = Objects.requireNonNull(memory, "memory");
    }

    void record(Instant at, double rate) {
        while (!candidates.isEmpty() && candidates.peekLast().rate() <= rate) {
            candidates.pollLast();
        }
        candidates.addLast(new Sample(at, rate));
    }

    /** The highest rate recorded within {@code memory} before {@code now}, or 0 without any. */
    double peak(Instant now) {
        Instant oldest = now.minus(memory);
        while (!candidates.isEmpty() && candidates.peekFirst().at().isBefore(oldest)) {
            candidates.pollFirst();
        }
        return candidates.isEmpty() ? 0 : candidates.peekFirst().rate();
    }
}
