package io.sr3.flink.pacing;

import javax.annotation.Nullable;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One poll of a job through {@link JobEndpoint}.
 *
 * @param state Flink's job status name ({@code RUNNING}, {@code RESTARTING}, ...)
 * @param terminal whether the job reached a globally terminal state (the pacer stops)
 * @param counters per-subtask counters, or null when the job is not running
 * @param completedCheckpoints recent completed checkpoints (not savepoints), oldest first
 * @param checkpointsInProgress checkpoints (or savepoints) currently running
 * @param latestFailedTrigger trigger time of the latest failed checkpoint, or the moment a
 *     trigger request of the pacer was answered with a failure if later; null without either
 * @param restartCount Flink's count of the job's restarts (its {@code numRestarts} metric), or
 *     {@link #UNKNOWN_RESTARTS} when the poll could not read it
 */
public record JobView(
        String state,
        boolean terminal,
        @Nullable JobCounters counters,
        List<CheckpointSample> completedCheckpoints,
        int checkpointsInProgress,
        @Nullable Instant latestFailedTrigger,
        long restartCount) {

    /** The restart count of a poll that could not read Flink's {@code numRestarts}. */
    public static final long UNKNOWN_RESTARTS = -1;

    public JobView {
        Objects.requireNonNull(state, "state");
        completedCheckpoints = List.copyOf(completedCheckpoints);
    }

    /** A poll without Flink's restart count. */
    public JobView(String state, boolean terminal, @Nullable JobCounters counters,
            List<CheckpointSample> completedCheckpoints, int checkpointsInProgress,
            @Nullable Instant latestFailedTrigger) {
        this(state, terminal, counters, completedCheckpoints, checkpointsInProgress, latestFailedTrigger,
                UNKNOWN_RESTARTS);
    }
}
