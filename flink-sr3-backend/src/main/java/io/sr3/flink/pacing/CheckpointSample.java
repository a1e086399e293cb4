package io.sr3.flink.pacing;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One completed checkpoint as Flink's statistics report it.
 *
 * @param id checkpoint id
 * @param triggered when the JobManager triggered it: the age of the state it captured starts here
 * @param duration trigger to last acknowledgement
 * @param stateSizeBytes full size of the state it references (what a restore reads)
 * @param largestShareBytes the most state one subtask restores (its vertex's state divided by its
 *     parallelism, for the vertex where that is largest): subtasks restore in parallel, so this
 *     share, not the whole state, sets how long a restore takes
 */
public record CheckpointSample(long id, Instant triggered, Duration duration, long stateSizeBytes,
        long largestShareBytes) {

    public CheckpointSample {
        Objects.requireNonNull(triggered, "triggered");
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative() || stateSizeBytes < 0 || largestShareBytes < 0) {
            throw new IllegalArgumentException("Checkpoint " + id + " has a negative duration (" + duration
                    + ") or size (" + stateSizeBytes + ", largest share " + largestShareBytes + ")");
        }
    }

    /** A checkpoint whose split over subtasks is unknown: one subtask may have to restore all of it. */
    public CheckpointSample(long id, Instant triggered, Duration duration, long stateSizeBytes) {
        this(id, triggered, duration, stateSizeBytes, stateSizeBytes);
    }
}
