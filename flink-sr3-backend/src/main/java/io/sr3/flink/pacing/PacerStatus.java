package io.sr3.flink.pacing;

import io.sr3.flink.pacing.Decision.Reason;

import javax.annotation.Nullable;

import java.util.Map;

/**
 * What a job's pacer last saw and decided, for its MBean and its {@code sr3.pacing} gauges.
 * Durations in milliseconds; -1 means unbounded or not known yet.
 *
 * @param boundMillis the allowed checkpoint age tau_max
 * @param estimatedRecoveryMillis recovery time if the job failed at the decision
 * @param checkpointAgeMillis age of the state a restore would start from, at the decision
 * @param lastCheckpointAtMillis epoch millis when the latest completed checkpoint was triggered
 * @param boundReachable whether the bound can be met at all
 * @param fallback whether the pacer leaves pacing to Flink's interval (metrics missing or stale)
 * @param decisions decisions taken so far
 * @param triggers checkpoints triggered, by reason
 * @param lastReason the reason of the latest decision, null before the first
 * @param restoreBytesPerSecond the restore bandwidth behind the estimate, measured or configured
 * @param observedMtbfMillis mean time between the job's recent restarts, -1 before two
 * @param publishedAtMillis epoch millis of this status
 */
public record PacerStatus(long boundMillis, long estimatedRecoveryMillis, long checkpointAgeMillis,
        long lastCheckpointAtMillis, boolean boundReachable, boolean fallback, long decisions, Map<Reason, Long> triggers,
        @Nullable Reason lastReason, long restoreBytesPerSecond, long observedMtbfMillis, long publishedAtMillis) {

    public PacerStatus {
        triggers = Map.copyOf(triggers);
    }

    /** The status of a pacer that has not decided yet. */
    static PacerStatus initial() {
        return new PacerStatus(-1, -1, -1, -1, true, false, 0, Map.of(), null, -1, -1, -1);
    }

    public long triggers(Reason reason) {
        return triggers.getOrDefault(reason, 0L);
    }
}
