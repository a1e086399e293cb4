package io.sr3.flink.pacing;

import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.transport.Payloads;

import javax.annotation.Nullable;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a job's pacer last saw and decided: read by its MBean in the JobManager and, published
 * through the ring under {@link #key}, by the {@code sr3.pacing} gauges of the job's operators
 * (Flink gives the checkpoint storage, which runs the pacer, no metric group). Durations in
 * milliseconds; -1 means unbounded or not known yet.
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
public record PacerStatus(
        long boundMillis,
        long estimatedRecoveryMillis,
        long checkpointAgeMillis,
        long lastCheckpointAtMillis,
        boolean boundReachable,
        boolean fallback,
        long decisions,
        Map<Reason, Long> triggers,
        @Nullable Reason lastReason,
        long restoreBytesPerSecond,
        long observedMtbfMillis,
        long publishedAtMillis) {

    public PacerStatus {
        triggers = Map.copyOf(triggers);
    }

    /** The status of a pacer that has not decided yet. */
    static PacerStatus initial() {
        return new PacerStatus(-1, -1, -1, -1, true, false, 0, Map.of(), null, -1, -1, -1);
    }

    /** The ring key of a job's status. */
    public static String key(String jobId) {
        return "pacer-" + jobId;
    }

    public long triggers(Reason reason) {
        return triggers.getOrDefault(reason, 0L);
    }

    public byte[] encode() {
        Map<String, Long> values = new LinkedHashMap<>();
        values.put("boundMillis", boundMillis);
        values.put("estimatedRecoveryMillis", estimatedRecoveryMillis);
        values.put("checkpointAgeMillis", checkpointAgeMillis);
        values.put("lastCheckpointAtMillis", lastCheckpointAtMillis);
        values.put("boundReachable", boundReachable ? 1L : 0L);
        values.put("fallback", fallback ? 1L : 0L);
        values.put("decisions", decisions);
        values.put("lastReason", lastReason == null ? -1L : lastReason.ordinal());
        values.put("restoreBytesPerSecond", restoreBytesPerSecond);
        values.put("observedMtbfMillis", observedMtbfMillis);
        values.put("publishedAtMillis", publishedAtMillis);
        triggers.forEach((reason, count) -> values.put("triggers." + reason.name(), count));
        return Payloads.longMap(values);
    }

    /** Decodes a status; unknown names (from a newer version) are ignored, missing ones read as -1. */
    public static PacerStatus decode(byte[] encoded) {
        Map<String, Long> values = Payloads.longMap(encoded);
        Map<Reason, Long> triggers = new EnumMap<>(Reason.class);
        for (Reason reason : Reason.values()) {
            Long count = values.get("triggers." + reason.name());
            if (count != null) {
                triggers.put(reason, count);
            }
        }
        long reason = values.getOrDefault("lastReason", -1L);
        return new PacerStatus(values.getOrDefault("boundMillis", -1L), values.getOrDefault("estimatedRecoveryMillis", -1L),
                values.getOrDefault("checkpointAgeMillis", -1L), values.getOrDefault("lastCheckpointAtMillis", -1L),
                values.getOrDefault("boundReachable", 0L) == 1, values.getOrDefault("fallback", 0L) == 1,
                values.getOrDefault("decisions", -1L), triggers,
                reason >= 0 && reason < Reason.values().length ? Reason.values()[(int) reason] : null,
                values.getOrDefault("restoreBytesPerSecond", -1L), values.getOrDefault("observedMtbfMillis", -1L),
                values.getOrDefault("publishedAtMillis", -1L));
    }
}
