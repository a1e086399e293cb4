package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.pacing.PacerStatus;
import io.sr3.flink.pacing.PacerStatusPublisher;
import io.sr3.flink.transport.Payloads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Writes a job's {@link PacerStatus} under {@link #key} through this process's ring node, for the
 * {@code sr3.pacing} gauges of the job's operators ({@link PacerMetrics}: Flink gives the
 * checkpoint storage, which runs the pacer, no metric group). At most once per
 * {@link #MIN_INTERVAL} and without waiting for the write: metrics must never slow the pacer
 * down. A failed write is logged once. {@link #clear} waits for the last write to settle before
 * it deletes the status, lest a write in flight land after the delete.
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
            lastWrite = node.storage().write(key(jobId), encode(status), false);
            lastWrite.whenComplete((holders, error) -> warnOnce(error));
        } catch (IOException | RuntimeException e) {
            warnOnce(e);
        }
    }

    private void warnOnce(Throwable error) {
        if (error != null && !warned) {
            warned = true;
            LOG.warn("[pacer {}] could not publish its status to the ring for the sr3.pacing metrics: {}", jobId,
                    error.toString());
        }
    }

    @Override
    public void clear() {
        try {
            RingStorage.await(lastWrite.handle((ignored, error) -> null)); // its outcome does not matter here
            Optional<RingNode> node = LocalRing.running();
            if (node.isPresent()) {
                node.get().storage().deleteOn(key(jobId), null);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("[pacer {}] could not delete its status from the ring: {}", jobId, e.toString());
        }
    }

    /** The ring key of a job's status. */
    static String key(String jobId) {
        return "pacer-" + jobId;
    }

    static byte[] encode(PacerStatus s) {
        Map<String, Long> values = new LinkedHashMap<>();
        values.put("boundMillis", s.boundMillis());
        values.put("estimatedRecoveryMillis", s.estimatedRecoveryMillis());
        values.put("checkpointAgeMillis", s.checkpointAgeMillis());
        values.put("lastCheckpointAtMillis", s.lastCheckpointAtMillis());
        values.put("boundReachable", s.boundReachable() ? 1L : 0L);
        values.put("fallback", s.fallback() ? 1L : 0L);
        values.put("decisions", s.decisions());
        values.put("lastReason", s.lastReason() == null ? -1L : s.lastReason().ordinal());
        values.put("restoreBytesPerSecond", s.restoreBytesPerSecond());
        values.put("observedMtbfMillis", s.observedMtbfMillis());
        values.put("publishedAtMillis", s.publishedAtMillis());
        s.triggers().forEach((reason, count) -> values.put("triggers." + reason.name(), count));
        return Payloads.longMap(values);
    }

    /** Decodes a status; unknown names (from a newer version) are ignored, missing ones read as -1. */
    static PacerStatus decode(byte[] encoded) {
        Map<String, Long> v = Payloads.longMap(encoded);
        Map<Reason, Long> triggers = new EnumMap<>(Reason.class);
        for (Reason reason : Reason.values()) {
            Long count = v.get("triggers." + reason.name());
            if (count != null) {
                triggers.put(reason, count);
            }
        }
        long reason = v.getOrDefault("lastReason", -1L);
        return new PacerStatus(v.getOrDefault("boundMillis", -1L), v.getOrDefault("estimatedRecoveryMillis", -1L),
                v.getOrDefault("checkpointAgeMillis", -1L), v.getOrDefault("lastCheckpointAtMillis", -1L),
                v.getOrDefault("boundReachable", 0L) == 1, v.getOrDefault("fallback", 0L) == 1,
                v.getOrDefault("decisions", -1L), triggers,
                reason >= 0 && reason < Reason.values().length ? Reason.values()[(int) reason] : null,
                v.getOrDefault("restoreBytesPerSecond", -1L), v.getOrDefault("observedMtbfMillis", -1L),
                v.getOrDefault("publishedAtMillis", -1L));
    }
}
