package io.sr3.flink.cluster;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link ProcessCluster} runs.
 *
 * @param taskManagers TaskManager processes started with the cluster
 * @param slotsPerTaskManager task slots of each TaskManager
 * @param sr3 true for flink-sr3 (ring checkpoints); false for Flink's RocksDB backend with
 *     {@code file://} checkpoints in the cluster's directory (the baseline)
 * @param workingState {@code sr3.working-state}
 * @param replicationFactor {@code sr3.ring.replication-factor}
 * @param zones {@code sr3.ring.zone} of the initial TaskManagers, cycled; empty for none
 * @param checkpointInterval {@code execution.checkpointing.interval}
 * @param retainedCheckpoints {@code execution.checkpointing.num-retained}
 * @param restartAttempts fixed-delay restart attempts
 * @param extraConfig further keys for every process
 */
public record ClusterSpec(
        int taskManagers,
        int slotsPerTaskManager,
        boolean sr3,
        String workingState,
        int replicationFactor,
        List<String> zones,
        Duration checkpointInterval,
        int retainedCheckpoints,
        int restartAttempts,
        Map<String, String> extraConfig) {

    public ClusterSpec {
        zones = List.copyOf(zones);
        extraConfig = Map.copyOf(extraConfig);
        Objects.requireNonNull(workingState, "workingState");
        if (taskManagers < 1 || slotsPerTaskManager < 1 || replicationFactor < 1 || retainedCheckpoints < 1) {
            throw new IllegalArgumentException("Counts must be positive: " + taskManagers + " TaskManagers, "
                    + slotsPerTaskManager + " slots, replication " + replicationFactor + ", retained " + retainedCheckpoints);
        }
    }

    /**
     * Restarts 500 ms apart for about a minute: until a replacement TaskManager registers, every
     * restart fails at once for want of slots, and on a loaded 2-core machine a TaskManager JVM
     * took 30 s to register (20 attempts ran out first).
     */
    public static final int DEFAULT_RESTART_ATTEMPTS = 120;

    /**
     * flink-sr3 with RocksDB working state, one slot per TaskManager, checkpoints every 500 ms, and
     * {@link #DEFAULT_RESTART_ATTEMPTS} restarts.
     */
    public static ClusterSpec sr3(int taskManagers, int replicationFactor) {
        return new ClusterSpec(taskManagers, 1, true, "rocksdb", replicationFactor, List.of(), Duration.ofMillis(500), 1,
                DEFAULT_RESTART_ATTEMPTS, Map.of());
    }

    /** The baseline: Flink's RocksDB backend with incremental {@code file://} checkpoints, same settings otherwise. */
    public ClusterSpec asRocksDbFileBaseline() {
        return new ClusterSpec(taskManagers, slotsPerTaskManager, false, workingState, replicationFactor, zones,
                checkpointInterval, retainedCheckpoints, restartAttempts, extraConfig);
    }

    public ClusterSpec withSlotsPerTaskManager(int slots) {
        return new ClusterSpec(taskManagers, slots, sr3, workingState, replicationFactor, zones, checkpointInterval,
                retainedCheckpoints, restartAttempts, extraConfig);
    }

    /** {@code sr3.working-state}: {@code rocksdb} or {@code heap}. */
    public ClusterSpec withWorkingState(String state) {
        return new ClusterSpec(taskManagers, slotsPerTaskManager, sr3, state, replicationFactor, zones,
                checkpointInterval, retainedCheckpoints, restartAttempts, extraConfig);
    }

    public ClusterSpec withZones(List<String> newZones) {
        return new ClusterSpec(taskManagers, slotsPerTaskManager, sr3, workingState, replicationFactor, newZones,
                checkpointInterval, retainedCheckpoints, restartAttempts, extraConfig);
    }

    public ClusterSpec withCheckpointInterval(Duration interval) {
        return new ClusterSpec(taskManagers, slotsPerTaskManager, sr3, workingState, replicationFactor, zones, interval,
                retainedCheckpoints, restartAttempts, extraConfig);
    }

    public ClusterSpec withRestartAttempts(int attempts) {
        return new ClusterSpec(taskManagers, slotsPerTaskManager, sr3, workingState, replicationFactor, zones,
                checkpointInterval, retainedCheckpoints, attempts, extraConfig);
    }

    public ClusterSpec withExtraConfig(Map<String, String> config) {
        return new ClusterSpec(taskManagers, slotsPerTaskManager, sr3, workingState, replicationFactor, zones,
                checkpointInterval, retainedCheckpoints, restartAttempts, config);
    }

    /** The zone of the i-th initial TaskManager. */
    public String zoneOf(int index) {
        return zones.isEmpty() ? "" : zones.get(index % zones.size());
    }
}
