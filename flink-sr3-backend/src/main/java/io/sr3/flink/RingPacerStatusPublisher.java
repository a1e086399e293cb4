package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.pacing.PacerStatus;
import io.sr3.flink.pacing.PacerStatusPublisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Writes a job's {@link PacerStatus} through this process's ring node, at most once per
 * {@link #MIN_INTERVAL}, without waiting for the write: metrics must never slow the pacer down.
 * A failed write is logged once and retried with the next status. {@link #clear} waits for the
 * last write to settle before it deletes the status: a write still in flight would otherwise land
 * on a replica after the delete and leave a stopped pacer's status behind.
 */
@NotThreadSafe
final class RingPacerStatusPublisher implements PacerStatusPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(RingPacerStatusPublisher.class);
    static final Duration MIN_INTERVAL = Duration.ofSeconds(1);

    private final String jobId;
    private final LongSupplier nanoClock;
    private long lastPublishedNanos = Long.MIN_VALUE;
    private CompletableFuture<?> lastWrite = CompletableFuture.completedFuture(null);
    private boolean warned;

    RingPacerStatusPublisher(String jobId) {
        this(jobId, System::nanoTime);
    }

    RingPacerStatusPublisher(String jobId, LongSupplier nanoClock) {
        this.jobId = jobId;
        this.nanoClock = nanoClock;
    }

    @Override
    public void publish(PacerStatus status) {
        long now = nanoClock.getAsLong();
        if (lastPublishedNanos != Long.MIN_VALUE && now - lastPublishedNanos < MIN_INTERVAL.toNanos()) {
            return;
        }
        lastPublishedNanos = now;
        try {
            RingNode node = LocalRing.running().orElseThrow(() -> new IOException("no ring node runs in this process"));
            lastWrite = node.storage().write(PacerStatus.key(jobId), status.encode(), false);
            lastWrite.whenComplete((holders, error) -> {
                if (error != null && !warned) {
                    warned = true;
                    LOG.warn("[pacer {}] could not publish its status to the ring for the sr3.pacing metrics: {}", jobId,
                            error.toString());
                }
            });
        } catch (IOException | RuntimeException e) {
            if (!warned) {
                warned = true;
                LOG.warn("[pacer {}] no ring node to publish its status for the sr3.pacing metrics: {}", jobId, e.toString());
            }
        }
    }

    @Override
    public void clear() {
        try {
            RingStorage.await(lastWrite.handle((ignored, error) -> null)); // its outcome does not matter here
            java.util.Optional<RingNode> node = LocalRing.running();
            if (node.isPresent()) {
                node.get().storage().deleteOn(PacerStatus.key(jobId), null);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("[pacer {}] could not delete its status from the ring: {}", jobId, e.toString());
        }
    }
}
