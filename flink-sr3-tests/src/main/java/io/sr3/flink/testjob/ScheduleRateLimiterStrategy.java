package io.sr3.flink.testjob;

import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Holds each record of {@link BurstyTestJob}'s source back until it is due. The source stays idle
 * (not busy) while it waits, as a source reading a log would: the limiter returns a future that
 * completes at the due time of the next record, which {@link ScheduledEventGenerator} publishes
 * in {@link BurstyRuns.Run} (Flink's rate limiters are not told record indices). After a restore
 * the first record goes at once and the source then reads everything already due at full speed.
 */
final class ScheduleRateLimiterStrategy<S extends SourceSplit> implements RateLimiterStrategy<S> {

    private static final long serialVersionUID = 1L;

    private final String runId;

    ScheduleRateLimiterStrategy(String runId) {
        this.runId = runId;
    }

    @Override
    public RateLimiter<S> createRateLimiter(int parallelism) {
        BurstyRuns.Run run = BurstyRuns.run(runId);
        return new RateLimiter<>() {
            @Override
            public CompletionStage<Void> acquire(int numberOfEvents) {
                long delay = run.nextDueMillis() - System.currentTimeMillis();
                if (delay <= 0) {
                    return CompletableFuture.completedFuture(null);
                }
                return CompletableFuture.runAsync(() -> {}, CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS));
            }
        };
    }
}
