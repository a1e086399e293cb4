package io.sr3.flink.pacing;

import java.time.Duration;

/**
 * R, the time to restore the current state, for the recovery-time model.
 *
 * <p>Until the restore planner (star/line/tree, DESIGN section 4) exists and predicts restore
 * times from measured per-peer bandwidth, this is state size divided by a configured restore
 * bandwidth ({@code sr3.pacing.restore-bandwidth}); it is not measured, so set the bandwidth from
 * a restore you observed. Pure.
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
