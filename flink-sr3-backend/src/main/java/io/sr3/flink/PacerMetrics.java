package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.pacing.PacerStatus;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.function.ToLongFunction;

/**
 * The checkpoint pacer of a job as Flink metrics, under {@code sr3.pacing} of every keyed operator
 * of a job that paces ({@link RingMetrics} registers them only then): the pacer runs in the
 * JobManager and publishes its {@link PacerStatus} through the ring ({@link RingPacerStatusPublisher});
 * these gauges read it back at most once per {@link #REFRESH} and report -1 until it is there.
 */
@ThreadSafe
final class PacerMetrics {

    private static final Logger LOG = LoggerFactory.getLogger(PacerMetrics.class);
    static final Duration REFRESH = Duration.ofSeconds(1);

    private final String jobId;
    private volatile long readAtNanos = Long.MIN_VALUE;
    @Nullable private volatile PacerStatus status;

    private PacerMetrics(String jobId) {
        this.jobId = jobId;
    }

    static void register(MetricGroup sr3Group, String jobId) {
        PacerMetrics metrics = new PacerMetrics(jobId);
        MetricGroup group = sr3Group.addGroup("pacing");
        metrics.gauge(group, "boundMillis", PacerStatus::boundMillis);
        metrics.gauge(group, "estimatedRecoveryMillis", PacerStatus::estimatedRecoveryMillis);
        metrics.gauge(group, "lastCheckpointAgeMillis", s -> s.lastCheckpointAtMillis() < 0 ? -1
                : Math.max(0, System.currentTimeMillis() - s.lastCheckpointAtMillis()));
        metrics.gauge(group, "boundReachable", s -> s.boundReachable() ? 1 : 0);
        metrics.gauge(group, "fallbackToPeriodic", s -> s.fallback() ? 1 : 0);
        metrics.gauge(group, "decisions", PacerStatus::decisions);
        metrics.gauge(group, "triggers.ageBound", s -> s.triggers(Reason.AGE_BOUND));
        metrics.gauge(group, "triggers.cheapestMoment", s -> s.triggers(Reason.CHEAPEST_MOMENT));
        metrics.gauge(group, "triggers.steadyInterval", s -> s.triggers(Reason.STEADY_INTERVAL));
    }

    private void gauge(MetricGroup group, String name, ToLongFunction<PacerStatus> value) {
        group.gauge(name, (Gauge<Long>) () -> {
            PacerStatus current = current();
            return current == null ? -1L : value.applyAsLong(current);
        });
    }

    @Nullable
    private PacerStatus current() {
        long now = System.nanoTime();
        if (readAtNanos == Long.MIN_VALUE || now - readAtNanos > REFRESH.toNanos()) {
            readAtNanos = now;
            try {
                RingNode node = LocalRing.running().orElse(null);
                byte[] encoded = node == null ? null
                        : node.storage().readAny(RingPacerStatusPublisher.key(jobId), "pacer status of job " + jobId);
                status = encoded == null ? null : RingPacerStatusPublisher.decode(encoded);
            } catch (IOException | RuntimeException e) {
                LOG.debug("Could not read the pacer status of job {} from the ring: {}", jobId, e.toString());
            }
        }
        return status;
    }
}
