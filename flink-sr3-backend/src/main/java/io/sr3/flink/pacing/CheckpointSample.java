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
 */
public record CheckpointSample(long id, Instant triggered, Duration duration, long stateSizeBytes) {

    public CheckpointSample {
        Objects.requireNonNull(triggered, "triggered");
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative() || stateSizeBytes < 0) {
            throw new IllegalArgumentException("Checkpoint " + id + " has a negative duration (" + duration
                    + ") or size (" + stateSizeBytes + ")");
        }
    }
}
