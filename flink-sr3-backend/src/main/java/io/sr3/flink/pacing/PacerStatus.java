package io.sr3.flink.pacing;

import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.transport.Payloads;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a job's pacer last decided, as the TaskManagers' Flink metrics show it. The pacer runs in
 * the JobManager, where Flink gives the checkpoint storage no metric group, so it publishes this
 * small record through the ring under {@link #key} and every keyed operator's {@code sr3.pacing}
 * gauges read it back.
 *
 * @param boundMillis the allowed checkpoint age tau_max, -1 when unbounded or unknown
 * @param estimatedRecoveryMillis recovery time if the job failed at the decision, -1 if unknown
 * @param lastCheckpointAtMillis epoch millis when the latest completed checkpoint was triggered,
 *     -1 before the first
 * @param boundReachable whether the bound can be met at all
 * @param fallback whether the pacer currently leaves pacing to Flink's interval (metrics missing)
 * @param decisions decisions taken so far
 * @param triggers checkpoints triggered, by reason
 * @param publishedAtMillis epoch millis of the decision
 */
public record PacerStatus(
        long boundMillis,
        long estimatedRecoveryMillis,
        long lastCheckpointAtMillis,
        boolean boundReachable,
        boolean fallback,
        long decisions,
        Map<Reason, Long> triggers,
        long publishedAtMillis) {

    public PacerStatus {
        triggers = Map.copyOf(triggers);
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
        values.put("lastCheckpointAtMillis", lastCheckpointAtMillis);
        values.put("boundReachable", boundReachable ? 1L : 0L);
        values.put("fallback", fallback ? 1L : 0L);
        values.put("decisions", decisions);
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
        return new PacerStatus(values.getOrDefault("boundMillis", -1L), values.getOrDefault("estimatedRecoveryMillis", -1L),
                values.getOrDefault("lastCheckpointAtMillis", -1L), values.getOrDefault("boundReachable", 0L) == 1,
                values.getOrDefault("fallback", 0L) == 1, values.getOrDefault("decisions", -1L), triggers,
                values.getOrDefault("publishedAtMillis", -1L));
    }
}
