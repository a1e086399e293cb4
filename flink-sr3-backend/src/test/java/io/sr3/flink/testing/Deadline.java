package io.sr3.flink.testing;

import javax.annotation.concurrent.Immutable;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A point in time by which a condition must hold, and the one way the tests and the benchmarks
 * wait for one: check, park briefly, check again, and fail naming what was awaited, and the last
 * state seen, once the time is up. Nothing here sleeps for an event; every wait is a poll.
 *
 * <pre>{@code
 * Deadline.poll("two completed checkpoints", Duration.ofSeconds(90),
 *         () -> cluster.completedCheckpoints(job) >= 2, () -> cluster.exceptions(job));
 * }</pre>
 *
 * <p>A condition may also throw to end the wait early (for example when the job it waits on has
 * failed); the exception reaches the caller unchanged.
 */
@Immutable
public final class Deadline {

    /** Between two checks: short next to any wait a test names, long enough not to keep a core busy. */
    public static final Duration DEFAULT_PAUSE = Duration.ofMillis(25);

    private final Duration timeout;
    private final long deadlineNanos;

    private Deadline(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("A deadline needs a timeout of zero or more, got " + timeout);
        }
        this.timeout = timeout;
        this.deadlineNanos = System.nanoTime() + timeout.toNanos();
    }

    /** The deadline {@code timeout} from now. */
    public static Deadline in(Duration timeout) {
        return new Deadline(timeout);
    }

    /** Polls {@code condition} every {@link #DEFAULT_PAUSE} until it holds; fails after {@code timeout}. */
    public static void poll(String what, Duration timeout, BooleanSupplier condition) {
        in(timeout).pollEvery(DEFAULT_PAUSE, what, condition, () -> "");
    }

    /** Like {@link #poll(String, Duration, BooleanSupplier)}; the failure also says {@code detail}, read once then. */
    public static void poll(String what, Duration timeout, BooleanSupplier condition, Supplier<String> detail) {
        in(timeout).pollEvery(DEFAULT_PAUSE, what, condition, detail);
    }

    /** Polls against this deadline, every {@link #DEFAULT_PAUSE}: several waits can share one. */
    public void poll(String what, BooleanSupplier condition, Supplier<String> detail) {
        pollEvery(DEFAULT_PAUSE, what, condition, detail);
    }

    /**
     * Checks {@code condition}, then every {@code pause}, until it holds.
     *
     * @throws AssertionError when this deadline passes first (naming {@code what} and {@code
     *     detail}), or when the thread is interrupted while waiting (its interrupt flag stays set)
     */
    public void pollEvery(Duration pause, String what, BooleanSupplier condition, Supplier<String> detail) {
        while (!condition.getAsBoolean()) {
            if (isOverdue()) {
                String state = detail.get();
                throw new AssertionError("Timed out after " + timeout + " waiting for " + what
                        + (state == null || state.isEmpty() ? "" : "; last state: " + state));
            }
            LockSupport.parkNanos(pause.toNanos());
            if (Thread.currentThread().isInterrupted()) {
                throw new AssertionError("Interrupted while waiting for " + what);
            }
        }
    }

    public boolean isOverdue() {
        return System.nanoTime() - deadlineNanos > 0;
    }

    /** The time until the deadline; zero or negative once it has passed. */
    public Duration timeLeft() {
        return Duration.ofNanos(deadlineNanos - System.nanoTime());
    }

    public Duration timeout() {
        return timeout;
    }
}
