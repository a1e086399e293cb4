package io.sr3.flink.pacing;

import java.time.Duration;

/**
 * R, the time to restore the current state, for the recovery-time model.
 *
 * <p>The largest share of the state one subtask restores (subtasks restore in parallel) divided
 * by a restore bandwidth: the slowest rate the TaskManagers' recent restores achieved
 * ({@code RestoreRates}, each measured for one subtask's restore), or
 * {@code sr3.pacing.restore-bandwidth} until one was measured. Pure.
 */
public final class RestoreEstimate {

    private RestoreEstimate() {}

    public static Duration fromBandwidth(long stateBytes, long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("Restore bandwidth must be > 0 bytes/s, was " + bytesPerSecond);
        }
        return Duration.ofMillis((long) Math.ceil(Math.max(0, stateBytes) * 1000.0 / bytesPerSecond));
    }
}
