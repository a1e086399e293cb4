package io.sr3.flink;

import io.sr3.flink.pacing.CheckpointPacer;
import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.pacing.PacerStatus;

import javax.annotation.concurrent.ThreadSafe;

/** A job's pacer as its {@link CheckpointPacerMXBean}: each getter reads the pacer's latest {@link PacerStatus}. */
@ThreadSafe
record PacerMBean(CheckpointPacer pacer) implements CheckpointPacerMXBean {

    @Override public long getMaxRecoveryTimeMillis() { return pacer.settings().maxRecoveryTime().toMillis(); }
    @Override public long getCheckpointAgeBoundMillis() { return status().boundMillis(); }
    @Override public long getEstimatedRecoveryTimeMillis() { return status().estimatedRecoveryMillis(); }
    @Override public long getLastCheckpointAgeMillis() { return status().checkpointAgeMillis(); }
    @Override public int getBoundUnreachable() { return status().boundReachable() ? 0 : 1; }
    @Override public int getFallingBack() { return status().fallback() ? 1 : 0; }
    @Override public long getTriggersAgeBound() { return status().triggers(Reason.AGE_BOUND); }
    @Override public long getTriggersCheapestMoment() { return status().triggers(Reason.CHEAPEST_MOMENT); }
    @Override public long getTriggersSteadyInterval() { return status().triggers(Reason.STEADY_INTERVAL); }
    @Override public long getDecisions() { return status().decisions(); }
    @Override public long getRestoreBytesPerSecond() { return status().restoreBytesPerSecond(); }
    @Override public long getObservedMtbfMillis() { return status().observedMtbfMillis(); }

    @Override
    public String getLastReason() {
        Reason reason = status().lastReason();
        return reason == null ? "none yet" : reason.name();
    }

    private PacerStatus status() {
        return pacer.status();
    }
}
