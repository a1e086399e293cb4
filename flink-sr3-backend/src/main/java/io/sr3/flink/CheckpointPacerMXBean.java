package io.sr3.flink;

/**
 * The pacer of one job ({@link io.sr3.flink.pacing.CheckpointPacer}) as a JMX MBean {@code io.sr3.flink:type=CheckpointPacer,job=<job id>} in
 * the JobManager process: the checkpoint storage that starts the pacer is not handed a Flink
 * metric group, so this is where its numbers are published. Durations in milliseconds; -1 means
 * unbounded (no input) or not known yet.
 */
public interface CheckpointPacerMXBean {

    /** The configured bound, {@code sr3.pacing.max-recovery-time}. */
    long getMaxRecoveryTimeMillis();

    /** tau_max: the largest checkpoint age that keeps recovery within the bound at the current load. */
    long getCheckpointAgeBoundMillis();

    /** The model's recovery time if a failure struck now; -1 when infinite or not known. */
    long getEstimatedRecoveryTimeMillis();

    /** Age of the state a restore would start from (since the last completed checkpoint was triggered). */
    long getLastCheckpointAgeMillis();

    /** 0 when the bound can be met, 1 when it cannot, not even with checkpoints back to back. */
    int getBoundUnreachable();

    /** 1 while the pacer leaves checkpoints to Flink's periodic interval because metrics are missing or stale. */
    int getFallingBack();

    long getTriggersAgeBound();

    long getTriggersCheapestMoment();

    long getTriggersSteadyInterval();

    /** Decisions taken (one per poll with fresh metrics). */
    long getDecisions();

    /** The reason of the latest decision. */
    String getLastReason();

    /** The restore bandwidth behind the estimated recovery time: measured by the TaskManagers, or configured. */
    long getRestoreBytesPerSecond();

    /** Mean time between the job's recent restarts as this pacer saw them; -1 before two restarts. */
    long getObservedMtbfMillis();
}
