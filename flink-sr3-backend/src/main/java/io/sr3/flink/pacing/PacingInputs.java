package io.sr3.flink.pacing;

import javax.annotation.Nullable;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What the pacer measured about one job at one moment: the only input of {@link PacingPolicy}
 * besides its settings and clock.
 *
 * @param inputRate lambda: records/s entering the job at its sources
 * @param capacity mu: records/s the job could process, from busy time ({@link LoadEstimator})
 * @param hottest the most loaded subtask, or null if none reported
 * @param recentCheckpoints the last completed checkpoints, oldest first (may be empty)
 * @param checkpointInProgress a checkpoint runs, or one the pacer requested has not shown up yet
 * @param restoreEstimate R: how long restoring the current state would take
 * @param ageOrigin where the state's age starts while no checkpoint completed (the job's start)
 * @param observedMtbf mean time between the job's recent restarts, or null before two
 * @param peakInputRate the highest input rate measured recently, at least {@code inputRate}: what a burst may bring back
 * @param catchingUp the job restarted and still works off its backlog
 * @param backlogRecords records that arrived since the last checkpoint was triggered, which a
 *     restore would replay; NaN when unknown, then the policy takes {@code inputRate * age}
 */
record PacingInputs(double inputRate, double capacity, @Nullable SubtaskLoad hottest,
        List<CheckpointSample> recentCheckpoints, boolean checkpointInProgress, Duration restoreEstimate,
        Instant ageOrigin, @Nullable Duration observedMtbf, double peakInputRate, boolean catchingUp,
        double backlogRecords) {

    PacingInputs {
        if (!(inputRate >= 0) || Double.isInfinite(inputRate) || !(capacity > 0) || !Double.isFinite(peakInputRate)) {
            throw new IllegalArgumentException("Rates must be finite and >= 0, capacity > 0; were input " + inputRate
                    + ", capacity " + capacity + ", peak " + peakInputRate);
        }
        if (backlogRecords < 0 || Double.isInfinite(backlogRecords)) {
            throw new IllegalArgumentException("backlogRecords must be finite and >= 0 (or NaN), was " + backlogRecords);
        }
        recentCheckpoints = List.copyOf(recentCheckpoints);
        Objects.requireNonNull(restoreEstimate, "restoreEstimate");
        Objects.requireNonNull(ageOrigin, "ageOrigin");
        peakInputRate = Math.max(peakInputRate, inputRate);
    }

    /** The latest completed checkpoint, or null. */
    @Nullable
    CheckpointSample lastCheckpoint() {
        return recentCheckpoints.isEmpty() ? null : recentCheckpoints.get(recentCheckpoints.size() - 1);
    }
}
