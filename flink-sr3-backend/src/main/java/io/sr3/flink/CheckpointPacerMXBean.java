package io.sr3.flink;

/**
 * The pacer of one job ({@link io.sr3.flink.pacing.CheckpointPacer}) as the MBean
 * {@code io.sr3.flink:type=CheckpointPacer,job=<job id>} in the JobManager process, where Flink
 * gives the pacer no metric group. Durations in milliseconds; -1 means unbounded (no input) or not
 * known yet.
 */
public interface CheckpointPacerMXBean {

    /** The configured bound, {@code sr3.pacing.max-recovery-time}. */
    long getMaxRecoveryTimeMillis();

    /** tau_max: the largest checkpoint age that keeps recovery within the bound at the current load. */
    long getCheckpointAgeBoundMillis();

    /** The model's recovery time if a failure struck now. */
    long getEstimatedRecoveryTimeMillis();

    /** Age of the state a restore would start from (since the last completed checkpoint was triggered). */
    long getLastCheckpointAgeMillis();

    /** 1 when the bound cannot be met, not even with checkpoints back to back, else 0. */
    int getBoundUnreachable();

    /** 1 while the pacer leaves checkpoints to Flink's interval because metrics are missing or stale. */
    int getFallingBack();

    long getTriggersAgeBound();

    long getTriggersCheapestMoment();

    long getTriggersSteadyInterval();

    /** Decisions taken (one per poll with fresh metrics). */
    long getDecisions();

    String getLastReason();

    /** The restore bandwidth behind the estimated recovery time: measured by the TaskManagers, or configured. */
    long getRestoreBytesPerSecond();

    /** Mean time between the job's recent restarts as this pacer saw them; -1 before two restarts. */
    long getObservedMtbfMillis();
}
