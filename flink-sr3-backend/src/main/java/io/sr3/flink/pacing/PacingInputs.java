package io.sr3.flink.pacing;

import javax.annotation.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What the pacer measured about one job at one moment; the only input of {@link PacingPolicy}
 * besides its settings and clock.
 *
 * @param inputRate lambda: records/s entering the job at its sources
 * @param capacity mu: records/s (counted at the sources) the job could process, estimated from
 *     busy time by {@link LoadEstimator}
 * @param subtasks busy and back-pressure ratios of every subtask
 * @param recentCheckpoints the last completed checkpoints, oldest first (may be empty)
 * @param checkpointInProgress a checkpoint is running, or one requested by the pacer has not shown
 *     up in the statistics yet
 * @param restoreEstimate R: how long restoring the current state would take ({@link RecoveryModel#restoreTime})
 * @param ageOrigin when the age of the state started if no checkpoint completed yet (the job's start)
 * @param observedMtbf the mean time between this job's recent restarts, or null before two
 *     restarts were seen; the policy uses it when it is shorter than the configured MTBF
 * @param peakInputRate the highest input rate measured recently ({@code sr3.pacing.peak-memory}),
 *     at least {@code inputRate}: the load a burst may bring back
 * @param catchingUp the job restarted and still works off its backlog at full speed (a subtask
 *     saturated since the restart)
 * @param backlogRecords records that arrived since the last checkpoint was triggered (or since
 *     {@code ageOrigin}), which a restore would replay; NaN when unknown, then the policy takes
 *     {@code inputRate * age}
 * @param bursts what the recent input says about bursts, or null before a burst ended
 */
record PacingInputs(
        double inputRate,
        double capacity,
        List<SubtaskLoad> subtasks,
        List<CheckpointSample> recentCheckpoints,
        boolean checkpointInProgress,
        Duration restoreEstimate,
        Instant ageOrigin,
        @Nullable Duration observedMtbf,
        double peakInputRate,
        boolean catchingUp,
        double backlogRecords,
        @Nullable BurstOutlook bursts) {

    public PacingInputs {
        if (!(inputRate >= 0) || Double.isInfinite(inputRate)) {
            throw new IllegalArgumentException("inputRate must be a finite rate >= 0, was " + inputRate);
        }
        if (!(capacity > 0)) {
            throw new IllegalArgumentException("capacity must be > 0 records/s, was " + capacity);
        }
        subtasks = List.copyOf(subtasks);
        recentCheckpoints = List.copyOf(recentCheckpoints);
        Objects.requireNonNull(restoreEstimate, "restoreEstimate");
        Objects.requireNonNull(ageOrigin, "ageOrigin");
        if (Double.isNaN(peakInputRate) || Double.isInfinite(peakInputRate)) {
            throw new IllegalArgumentException("peakInputRate must be a finite rate, was " + peakInputRate);
        }
        peakInputRate = Math.max(peakInputRate, inputRate);
        if (backlogRecords < 0 || Double.isInfinite(backlogRecords)) {
            throw new IllegalArgumentException("backlogRecords must be finite and >= 0 (or NaN), was " + backlogRecords);
        }
    }

    /**
     * Inputs without an observed MTBF (the job has not restarted twice yet), an earlier peak, a
     * catch-up, a counted backlog or bursts.
     */
    public PacingInputs(double inputRate, double capacity, List<SubtaskLoad> subtasks,
            List<CheckpointSample> recentCheckpoints, boolean checkpointInProgress, Duration restoreEstimate,
            Instant ageOrigin) {
        this(inputRate, capacity, subtasks, recentCheckpoints, checkpointInProgress, restoreEstimate, ageOrigin, null,
                inputRate, false, Double.NaN, null);
    }

    /** The same inputs with another observed MTBF. */
    public PacingInputs withObservedMtbf(@Nullable Duration mtbf) {
        return new PacingInputs(inputRate, capacity, subtasks, recentCheckpoints, checkpointInProgress, restoreEstimate,
                ageOrigin, mtbf, peakInputRate, catchingUp, backlogRecords, bursts);
    }

    /** The same inputs with another recent peak input rate. */
    public PacingInputs withPeakInputRate(double peak) {
        return new PacingInputs(inputRate, capacity, subtasks, recentCheckpoints, checkpointInProgress, restoreEstimate,
                ageOrigin, observedMtbf, peak, catchingUp, backlogRecords, bursts);
    }

    /** The same inputs, catching up after a restart or not. */
    public PacingInputs withCatchingUp(boolean replaying) {
        return new PacingInputs(inputRate, capacity, subtasks, recentCheckpoints, checkpointInProgress, restoreEstimate,
                ageOrigin, observedMtbf, peakInputRate, replaying, backlogRecords, bursts);
    }

    /** The same inputs with a counted backlog (NaN: unknown). */
    public PacingInputs withBacklog(double records) {
        return new PacingInputs(inputRate, capacity, subtasks, recentCheckpoints, checkpointInProgress, restoreEstimate,
                ageOrigin, observedMtbf, peakInputRate, catchingUp, records, bursts);
    }

    /** The same inputs with another burst outlook. */
    public PacingInputs withBursts(@Nullable BurstOutlook outlook) {
        return new PacingInputs(inputRate, capacity, subtasks, recentCheckpoints, checkpointInProgress, restoreEstimate,
                ageOrigin, observedMtbf, peakInputRate, catchingUp, backlogRecords, outlook);
    }

    /** The latest completed checkpoint, or null. */
    @Nullable
    public CheckpointSample lastCheckpoint() {
        return recentCheckpoints.isEmpty() ? null : recentCheckpoints.get(recentCheckpoints.size() - 1);
    }

    /** The most loaded subtask, or null if none reported. */
    @Nullable
    public SubtaskLoad hottest() {
        SubtaskLoad hottest = null;
        for (SubtaskLoad s : subtasks) {
            if (hottest == null || s.load() > hottest.load()) {
                hottest = s;
            }
        }
        return hottest;
    }
}
