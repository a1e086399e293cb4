package io.sr3.flink.pacing;

import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * What a job's pacer needs from the configuration, captured by the checkpoint storage factory
 * (serializable because the checkpoint storage is) from the options {@code io.sr3.flink.Sr3PacingOptions}
 * validates.
 *
 * @param maxRecoveryTime the bound, {@code sr3.pacing.max-recovery-time}
 * @param failureDetection D, {@code sr3.pacing.failure-detection-time}
 * @param mtbf {@code sr3.pacing.mtbf}
 * @param restoreBytesPerSecond {@code sr3.pacing.restore-bandwidth}
 * @param restUrl the JobManager's REST API
 * @param decisionPeriod how often the pacer polls and decides; the deadline keeps one period of margin
 * @param staleAfter metrics unchanged for this long count as stale
 * @param peakMemory how long peak input rates and capacities are remembered, {@code sr3.pacing.peak-memory}
 */
public record PacingSettings(Duration maxRecoveryTime, Duration failureDetection, Duration mtbf,
        long restoreBytesPerSecond, String restUrl, Duration decisionPeriod, Duration staleAfter, Duration peakMemory)
        implements Serializable {

    private static final long serialVersionUID = 4L;

    public PacingSettings {
        requirePositive(maxRecoveryTime, "maxRecoveryTime");
        requirePositive(failureDetection, "failureDetection");
        requirePositive(mtbf, "mtbf");
        requirePositive(decisionPeriod, "decisionPeriod");
        requirePositive(staleAfter, "staleAfter");
        requirePositive(peakMemory, "peakMemory");
        if (failureDetection.compareTo(maxRecoveryTime) >= 0) {
            throw new IllegalArgumentException("The recovery-time bound (" + maxRecoveryTime
                    + ") must be longer than the failure-detection time (" + failureDetection + ")");
        }
        if (restoreBytesPerSecond <= 0) {
            throw new IllegalArgumentException("restoreBytesPerSecond must be > 0, was " + restoreBytesPerSecond);
        }
        URI.create(Objects.requireNonNull(restUrl, "restUrl"));
    }

    private static void requirePositive(Duration d, String name) {
        if (Objects.requireNonNull(d, name).isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be a positive duration, was " + d);
        }
    }
}
