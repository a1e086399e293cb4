package io.sr3.flink.replication;

import java.util.Locale;

/** How the replication policy chooses each operator's copies ({@code sr3.replication.mode}). */
public enum ReplicationMode {
    /** Every operator gets the replication factor: the behaviour without this policy. */
    UNIFORM,
    /** Operators with a higher failure cost per byte get more copies, within a storage budget. */
    COST_AWARE;

    /** The configuration spelling, {@code uniform} or {@code cost-aware}; Flink's enum options parse by it. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
