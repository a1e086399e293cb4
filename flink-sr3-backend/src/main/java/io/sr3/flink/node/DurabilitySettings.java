package io.sr3.flink.node;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;

/**
 * What a write must reach before it is acknowledged, and how long the ring waits before it acts
 * on a failure ({@code sr3.ring.min-replicas}, {@code sr3.repair.delay},
 * {@code sr3.store.tombstone-retention}).
 *
 * @param minReplicas distinct nodes that must acknowledge every block and manifest before the
 *     write succeeds (the write quorum)
 * @param repairDelay how long after a member was removed its blocks are re-replicated, so that a
 *     pause longer than the failure detector does not start a repair storm
 * @param tombstoneRetention how long the record of a deleted file is kept: a node away longer
 *     than this may bring copies of files deleted meanwhile back
 * @param clusterId the cluster whose checkpoints this node's store may hold
 *     ({@code sr3.ring.cluster-id}); null for no check
 */
public record DurabilitySettings(int minReplicas, Duration repairDelay, Duration tombstoneRetention,
        @Nullable String clusterId) {

    /** The default of {@code sr3.repair.delay}. */
    public static final Duration DEFAULT_REPAIR_DELAY = Duration.ofMinutes(1);

    /** The default of {@code sr3.store.tombstone-retention}. */
    public static final Duration DEFAULT_TOMBSTONE_RETENTION = Duration.ofHours(24);

    public DurabilitySettings {
        if (minReplicas < 1) {
            throw new IllegalArgumentException("minReplicas must be >= 1, was " + minReplicas);
        }
        Objects.requireNonNull(repairDelay, "repairDelay");
        Objects.requireNonNull(tombstoneRetention, "tombstoneRetention");
        if (repairDelay.isNegative()) {
            throw new IllegalArgumentException("repairDelay must not be negative, was " + repairDelay);
        }
        if (tombstoneRetention.isNegative() || tombstoneRetention.isZero()) {
            throw new IllegalArgumentException("tombstoneRetention must be positive, was " + tombstoneRetention);
        }
        if (clusterId != null && (clusterId.isEmpty() || !clusterId.matches("\\S+"))) {
            throw new IllegalArgumentException("clusterId must be non-empty and without whitespace, was '" + clusterId + "'");
        }
    }

    /** The option defaults for a ring with the given replication factor: every copy is in the quorum. */
    public static DurabilitySettings defaults(int replicationFactor) {
        return new DurabilitySettings(replicationFactor, DEFAULT_REPAIR_DELAY, DEFAULT_TOMBSTONE_RETENTION, null);
    }

    public DurabilitySettings withMinReplicas(int newMinReplicas) {
        return new DurabilitySettings(newMinReplicas, repairDelay, tombstoneRetention, clusterId);
    }

    public DurabilitySettings withRepairDelay(Duration newRepairDelay) {
        return new DurabilitySettings(minReplicas, newRepairDelay, tombstoneRetention, clusterId);
    }
}
