package io.sr3.flink.node;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;

/**
 * What a write must reach before it is acknowledged, how long the ring waits before it acts
 * on a failure, and how often it checks that replicas really exist ({@code sr3.ring.min-replicas},
 * {@code sr3.repair.delay}, {@code sr3.store.tombstone-retention}, {@code sr3.repair.check-interval},
 * {@code sr3.scrub.bandwidth}, {@code sr3.scrub.interval}).
 *
 * @param minReplicas distinct nodes that must acknowledge every block and manifest before the
 *     write succeeds (the write quorum)
 * @param repairDelay how long after a member was removed its blocks are re-replicated, so that a
 *     pause longer than the failure detector does not start a repair storm
 * @param tombstoneRetention how long the record of a deleted file is kept: a node away longer
 *     than this may bring copies of files deleted meanwhile back
 * @param clusterId the cluster whose checkpoints this node's store may hold
 *     ({@code sr3.ring.cluster-id}); null for no check
 * @param repairCheckInterval how often the repairing node of each file asks every recorded holder
 *     whether it holds an intact copy of each block (block headers only), even on a steady ring
 * @param scrubBandwidth bytes per second each storage node reads to verify its own blocks; 0 turns
 *     the scrubber off
 * @param scrubInterval how often a scrub pass over every block of a node's store starts, at most
 */
public record DurabilitySettings(int minReplicas, Duration repairDelay, Duration tombstoneRetention,
        @Nullable String clusterId, Duration repairCheckInterval, long scrubBandwidth, Duration scrubInterval) {

    /** The default of {@code sr3.repair.delay}. */
    public static final Duration DEFAULT_REPAIR_DELAY = Duration.ofMinutes(1);

    /** The default of {@code sr3.store.tombstone-retention}. */
    public static final Duration DEFAULT_TOMBSTONE_RETENTION = Duration.ofHours(24);

    /** The default of {@code sr3.repair.check-interval}. */
    public static final Duration DEFAULT_REPAIR_CHECK_INTERVAL = Duration.ofMinutes(10);

    /** The default of {@code sr3.scrub.bandwidth}: 4 MiB per second, a pass over 100 GiB in about 7 hours. */
    public static final long DEFAULT_SCRUB_BANDWIDTH = 4L << 20;

    /** The default of {@code sr3.scrub.interval}. */
    public static final Duration DEFAULT_SCRUB_INTERVAL = Duration.ofHours(24);

    /** Settings with the default presence checks and scrubbing. */
    public DurabilitySettings(int minReplicas, Duration repairDelay, Duration tombstoneRetention, @Nullable String clusterId) {
        this(minReplicas, repairDelay, tombstoneRetention, clusterId, DEFAULT_REPAIR_CHECK_INTERVAL,
                DEFAULT_SCRUB_BANDWIDTH, DEFAULT_SCRUB_INTERVAL);
    }

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
        Objects.requireNonNull(repairCheckInterval, "repairCheckInterval");
        Objects.requireNonNull(scrubInterval, "scrubInterval");
        if (repairCheckInterval.isNegative() || repairCheckInterval.isZero()) {
            throw new IllegalArgumentException("repairCheckInterval must be positive, was " + repairCheckInterval);
        }
        if (scrubBandwidth < 0) {
            throw new IllegalArgumentException("scrubBandwidth must not be negative, was " + scrubBandwidth);
        }
        if (scrubInterval.isNegative() || scrubInterval.isZero()) {
            throw new IllegalArgumentException("scrubInterval must be positive, was " + scrubInterval);
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
        return new DurabilitySettings(newMinReplicas, repairDelay, tombstoneRetention, clusterId, repairCheckInterval,
                scrubBandwidth, scrubInterval);
    }

    public DurabilitySettings withRepairDelay(Duration newRepairDelay) {
        return new DurabilitySettings(minReplicas, newRepairDelay, tombstoneRetention, clusterId, repairCheckInterval,
                scrubBandwidth, scrubInterval);
    }

    public DurabilitySettings withRepairCheckInterval(Duration newRepairCheckInterval) {
        return new DurabilitySettings(minReplicas, repairDelay, tombstoneRetention, clusterId, newRepairCheckInterval,
                scrubBandwidth, scrubInterval);
    }

    public DurabilitySettings withScrub(long newScrubBandwidth, Duration newScrubInterval) {
        return new DurabilitySettings(minReplicas, repairDelay, tombstoneRetention, clusterId, repairCheckInterval,
                newScrubBandwidth, newScrubInterval);
    }
}
