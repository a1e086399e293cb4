package io.sr3.flink;

import io.sr3.flink.pacing.CheckpointPacer;
import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.pacing.PacerStatus;

import javax.annotation.concurrent.ThreadSafe;

/** A job's pacer as its {@link CheckpointPacerMXBean}: each getter reads the pacer's latest {@link PacerStatus}. */
@ThreadSafe
final class PacerMBean implements CheckpointPacerMXBean {

    private final CheckpointPacer pacer;

    PacerMBean(CheckpointPacer pacer) {
        this.pacer = pacer;
    }

    @Override
    public long getMaxRecoveryTimeMillis() {
        return pacer.settings().maxRecoveryTime().toMillis();
    }

    @Override
    public long getCheckpointAgeBoundMillis() {
        return pacer.status().boundMillis();
    }

    @Override
    public long getEstimatedRecoveryTimeMillis() {
        return pacer.status().estimatedRecoveryMillis();
    }

    @Override
    public long getLastCheckpointAgeMillis() {
        return pacer.status().checkpointAgeMillis();
    }

    @Override
    public int getBoundUnreachable() {
        return pacer.status().boundReachable() ? 0 : 1;
    }

    @Override
    public int getFallingBack() {
        return pacer.status().fallback() ? 1 : 0;
    }

    @Override
    public long getTriggersAgeBound() {
        return pacer.status().triggers(Reason.AGE_BOUND);
    }

    @Override
    public long getTriggersCheapestMoment() {
        return pacer.status().triggers(Reason.CHEAPEST_MOMENT);
    }

    @Override
    public long getTriggersSteadyInterval() {
        return pacer.status().triggers(Reason.STEADY_INTERVAL);
    }

    @Override
    public long getDecisions() {
        return pacer.status().decisions();
    }

    @Override
    public String getLastReason() {
        Reason reason = pacer.status().lastReason();
        return reason == null ? "none yet" : reason.name();
    }

    @Override
    public long getRestoreBytesPerSecond() {
        return pacer.status().restoreBytesPerSecond();
    }

    @Override
    public long getObservedMtbfMillis() {
        return pacer.status().observedMtbfMillis();
    }
}
