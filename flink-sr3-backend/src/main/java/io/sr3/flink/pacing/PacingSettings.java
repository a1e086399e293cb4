package io.sr3.flink.pacing;

import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * What a job's pacer needs from the configuration, captured by the checkpoint storage factory
 * (small and serializable because the checkpoint storage is); validated by
 * {@code io.sr3.flink.Sr3PacingOptions}.
 *
 * @param maxRecoveryTime the bound, {@code sr3.pacing.max-recovery-time}
 * @param failureDetection D, {@code sr3.pacing.failure-detection-time}
 * @param mtbf {@code sr3.pacing.mtbf}
 * @param restoreBytesPerSecond {@code sr3.pacing.restore-bandwidth}
 * @param restUrl the JobManager's REST API
 * @param decisionPeriod how often the pacer polls and decides
 * @param staleAfter metrics unchanged for this long count as stale
 * @param peakMemory how long the highest measured input rate is remembered, {@code sr3.pacing.peak-memory}
 */
public record PacingSettings(
        Duration maxRecoveryTime,
        Duration failureDetection,
        Duration mtbf,
        long restoreBytesPerSecond,
        String restUrl,
        Duration decisionPeriod,
        Duration staleAfter,
        Duration peakMemory) implements Serializable {

    private static final long serialVersionUID = 3L;

    public PacingSettings {
        Objects.requireNonNull(restUrl, "restUrl");
        URI.create(restUrl);
        policySettings(maxRecoveryTime, failureDetection, mtbf, decisionPeriod);
        if (restoreBytesPerSecond <= 0) {
            throw new IllegalArgumentException("restoreBytesPerSecond must be > 0, was " + restoreBytesPerSecond);
        }
        Objects.requireNonNull(staleAfter, "staleAfter");
        Objects.requireNonNull(peakMemory, "peakMemory");
        if (peakMemory.isNegative() || peakMemory.isZero()) {
            throw new IllegalArgumentException("peakMemory must be a positive duration, was " + peakMemory);
        }
    }

    PacingPolicy.Settings policySettings() {
        return policySettings(maxRecoveryTime, failureDetection, mtbf, decisionPeriod);
    }

    private static PacingPolicy.Settings policySettings(Duration rto, Duration detection, Duration mtbf, Duration period) {
        return PacingPolicy.Settings.of(rto, detection, mtbf, period);
    }
}
