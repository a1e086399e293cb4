package io.sr3.flink;

import io.sr3.flink.replication.ReplicationSettings;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * What the JobManager's replication planner of a job needs, captured from the configuration
 * ({@code sr3.replication.*}) when the checkpoint storage is created.
 *
 * @param settings the policy's mode, budget and bounds
 * @param interval how often the plan is recomputed from the job's REST metrics
 * @param restUrl the JobManager's REST API
 * @param detection how long Flink takes to notice a failure (its heartbeat timeout)
 * @param restoreBytesPerSecond the restore rate assumed until a restore on this ring was measured
 */
public record ReplicationSetup(ReplicationSettings settings, Duration interval, String restUrl, Duration detection,
        long restoreBytesPerSecond) implements Serializable {

    public ReplicationSetup {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(interval, "interval");
        Objects.requireNonNull(restUrl, "restUrl");
        Objects.requireNonNull(detection, "detection");
    }
}
