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
import java.util.Locale;
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
        for (Reason reason : Reason.values()) {
            if (reason.triggers()) {
                metrics.gauge(group, "triggers." + camel(reason), s -> s.triggers(reason));
            }
        }
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
                status = read();
            } catch (IOException | RuntimeException e) {
                LOG.debug("Could not read the pacer status of job {} from the ring: {}", jobId, e.toString());
            }
        }
        return status;
    }

    @Nullable
    private PacerStatus read() throws IOException {
        for (RingNode node : LocalRing.nodes()) {
            if (node.isRunning()) {
                byte[] encoded = node.storage().readAny(RingPacerStatusPublisher.key(jobId), "pacer status of job " + jobId);
                return encoded == null ? null : RingPacerStatusPublisher.decode(encoded);
            }
        }
        return null;
    }

    /** AGE_BOUND -> ageBound. */
    private static String camel(Reason reason) {
        String[] parts = reason.name().toLowerCase(Locale.ROOT).split("_");
        StringBuilder name = new StringBuilder(parts[0]);
        for (int i = 1; i < parts.length; i++) {
            name.append(Character.toUpperCase(parts[i].charAt(0))).append(parts[i].substring(1));
        }
        return name.toString();
    }
}
