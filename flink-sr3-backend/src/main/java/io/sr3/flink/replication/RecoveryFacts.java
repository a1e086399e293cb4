package io.sr3.flink.replication;

import java.time.Duration;
import java.util.Objects;

/**
 * What the cluster measured, job-wide: the inputs of the failure-cost model that do not depend on
 * the operator.
 *
 * @param restoreBytesPerSecond the rate one subtask restores at, as the ring measured it (> 0)
 * @param detection D: time from a failure until Flink restarts the tasks
 * @param checkpointAge the expected age of the latest checkpoint when a failure strikes (the
 *     driver passes half the checkpoint interval)
 */
public record RecoveryFacts(long restoreBytesPerSecond, Duration detection, Duration checkpointAge) {

    public RecoveryFacts {
        Objects.requireNonNull(detection, "detection");
        Objects.requireNonNull(checkpointAge, "checkpointAge");
        if (restoreBytesPerSecond <= 0) {
            throw new IllegalArgumentException("restoreBytesPerSecond must be > 0, was " + restoreBytesPerSecond);
        }
        if (detection.isNegative()) {
            throw new IllegalArgumentException("detection must be >= 0, was " + detection);
        }
        if (checkpointAge.isNegative()) {
            throw new IllegalArgumentException("checkpointAge must be >= 0, was " + checkpointAge);
        }
    }

    double detectionSeconds() {
        return detection.toNanos() / 1e9;
    }

    double checkpointAgeSeconds() {
        return checkpointAge.toNanos() / 1e9;
    }
}
