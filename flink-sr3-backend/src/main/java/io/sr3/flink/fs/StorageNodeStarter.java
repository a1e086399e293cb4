package io.sr3.flink.fs;

import org.apache.flink.annotation.VisibleForTesting;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.apache.flink.util.Preconditions.checkArgument;

/**
 * Starts a TaskManager's storage node in the background as soon as Flink configures its file
 * systems, and keeps retrying with a doubling delay (1 s up to 30 s) until it runs: a ring port
 * still held by a process that is going away, or a store directory not yet mounted, then delays
 * the node's join instead of leaving the TaskManager out of the ring until its first file
 * operation. Each failed attempt is logged with its cause; the thread is a daemon and ends with
 * the first successful attempt.
 */
@ThreadSafe
final class StorageNodeStarter {

    private static final Logger LOG = LoggerFactory.getLogger(StorageNodeStarter.class);

    static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    static final Duration LONGEST_RETRY = Duration.ofSeconds(30);

    private final Callable<?> start;
    private final Duration firstRetry;
    private final Duration longestRetry;
    private final ScheduledExecutorService executor;
    private final AtomicInteger attempts = new AtomicInteger();

    private StorageNodeStarter(Callable<?> start, Duration firstRetry, Duration longestRetry) {
        checkArgument(!firstRetry.isNegative() && firstRetry.compareTo(longestRetry) <= 0,
                "firstRetry %s must be between 0 and longestRetry %s", firstRetry, longestRetry);
        this.start = start;
        this.firstRetry = firstRetry;
        this.longestRetry = longestRetry;
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "sr3-ring-start");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Begins starting in the background with {@code start}, which must be idempotent. */
    static StorageNodeStarter begin(Callable<?> start) {
        return begin(start, FIRST_RETRY, LONGEST_RETRY);
    }

    @VisibleForTesting
    static StorageNodeStarter begin(Callable<?> start, Duration firstRetry, Duration longestRetry) {
        StorageNodeStarter starter = new StorageNodeStarter(start, firstRetry, longestRetry);
        starter.executor.execute(() -> starter.attempt(starter.firstRetry));
        return starter;
    }

    /** How many attempts have been made so far, the running one included. */
    int attempts() {
        return attempts.get();
    }

    /** Whether an attempt succeeded (or {@link #stop} was called), so no more will be made. */
    boolean isDone() {
        return executor.isShutdown();
    }

    /** Makes no further attempts. */
    void stop() {
        executor.shutdownNow();
    }

    private void attempt(Duration nextDelay) {
        int attempt = attempts.incrementAndGet();
        try {
            start.call();
            if (attempt > 1) {
                LOG.info("Started the sr3 ring node of this process at attempt {}", attempt);
            }
            executor.shutdown();
        } catch (Exception e) {
            LOG.warn("Could not start the sr3 ring node of this process (attempt {}); retrying in {} ms. A ring port "
                    + "still in use or a store directory that cannot be written are the usual causes", attempt,
                    nextDelay.toMillis(), e);
            Duration doubled = nextDelay.multipliedBy(2);
            Duration after = doubled.compareTo(longestRetry) > 0 ? longestRetry : doubled;
            try {
                executor.schedule(() -> attempt(after), nextDelay.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopped) {
                // stop() was called: no further attempts
            }
        }
    }
}
