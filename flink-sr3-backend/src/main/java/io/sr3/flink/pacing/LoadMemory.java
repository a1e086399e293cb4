package io.sr3.flink.pacing;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * What the pacer remembers about a job's load beyond the current rate window, for
 * {@code sr3.pacing.peak-memory}:
 * <ul>
 *   <li>the peak input rate, leaving out rates measured under back-pressure or during a replay
 *       (and one rate window after it): a source working off a backlog reads as fast as the job
 *       takes records;
 *   <li>the capacity a replay would have: a replay runs without a checkpoint competing for CPU,
 *       disk and network, so only capacities measured without one count (the latest, and the
 *       highest under load, since per-record overhead inflates busy time at low load), and so
 *       does the rate at which the sources read during recent replays;
 *   <li>the bursts ({@link BurstHistory});
 *   <li>whether the job still replays after a restart: until no subtask is saturated over the
 *       last sample interval, once the replay was seen saturated or the sources read the
 *       estimated backlog again, for at most twice the recovery time the model expected and at
 *       most the bound (a job still saturated then is busy with new input, not the replay).
 * </ul>
 */
@NotThreadSafe
final class LoadMemory {

    /** A subtask at least this busy has per-record overhead amortized: its capacity estimate is close to a replay's. */
    static final double LOADED_BUSY = 0.5;
    /** A subtask back-pressured more than this is working off a backlog, not following the input. */
    static final double BACKLOG_BACK_PRESSURE = 0.2;
    /** After a restart, the replay runs until no subtask is this loaded any more. */
    static final double REPLAY_LOAD = 0.9;

    private final Duration memory;
    private final Duration longestReplay;
    /** Rates are averaged over this long: for one window after a replay, they still contain it. */
    private final Duration rateWindow;
    private final RateExtreme peak;
    private final RateExtreme replayRate;
    private final BurstHistory bursts;
    private final RateExtreme loadedCapacity;
    private double capacityWithoutCheckpoint;
    @Nullable private Instant capacityWithoutCheckpointAt;
    @Nullable private Instant restartedAt;
    @Nullable private Instant replayEndedAt;
    private double replayBacklog;
    /** Whether a sample since the restart showed a subtask saturated: the replay was seen running. */
    private boolean replaySeen;
    private Duration replayLimit = Duration.ZERO;

    LoadMemory(Duration memory, Duration longestReplay, Duration rateWindow) {
        this.memory = memory;
        this.longestReplay = longestReplay;
        this.rateWindow = rateWindow;
        this.peak = RateExtreme.highest(memory);
        this.replayRate = RateExtreme.highest(memory);
        this.loadedCapacity = RateExtreme.highest(memory);
        this.bursts = new BurstHistory(memory, rateWindow);
    }

    /**
     * The job restarted at {@code now}: it replays until no subtask is saturated any more.
     *
     * @param expectedRecovery the recovery time the model predicted for the state's age at the
     *     failure, or null when it had none; the replay is left alone for at most twice that
     * @param backlog the records that arrived since the restored checkpoint: the replay is not
     *     over before the sources have read them again (right after a restart, tasks that are
     *     still restoring their state look idle, not caught up)
     */
    void restarted(Instant now, @Nullable Duration expectedRecovery, double backlog) {
        restartedAt = now;
        replayBacklog = backlog;
        replaySeen = false;
        bursts.interrupt();
        Duration twiceExpected = expectedRecovery == null ? longestReplay : expectedRecovery.multipliedBy(2);
        replayLimit = twiceExpected.compareTo(longestReplay) < 0 ? twiceExpected : longestReplay;
    }

    /**
     * Takes in a fresh load.
     *
     * @param load the load over the rate window
     * @param latest the load over the last sample interval only, which tells when a replay ended
     * @param withoutCheckpoint no checkpoint ran during the load's window
     * @param sourceRecords records the sources emitted since their attempt started
     * @return why a replay ended with this load, or null
     */
    @Nullable
    String observe(Instant now, LoadEstimator.Load load, LoadEstimator.Load latest, boolean withoutCheckpoint,
            long sourceRecords) {
        if (restartedAt != null && withoutCheckpoint) {
            replayRate.record(now, load.inputRate());
        }
        String ended = null;
        if (restartedAt != null) {
            Duration since = Duration.between(restartedAt, now);
            boolean saturated = hottest(latest) >= REPLAY_LOAD;
            if (!saturated && (replaySeen || sourceRecords >= replayBacklog)) {
                ended = String.format(Locale.ROOT, "caught up %d ms after the restart: %s, with %d records read again "
                        + "(the backlog was estimated at about %.0f)", since.toMillis(), replaySeen
                                ? "replayed at full load, and no subtask is saturated any more"
                                : "no subtask is saturated", sourceRecords, replayBacklog);
            } else if (since.compareTo(replayLimit) > 0) {
                ended = "still saturated " + since.toMillis() + " ms after the restart, " + (replayLimit.equals(longestReplay)
                        ? "longer than the recovery-time bound"
                        : "longer than twice the " + replayLimit.dividedBy(2).toMillis() + " ms the model expected for "
                                + "this recovery")
                        + ": busy with new input (a burst or overload), not the replay, so pacing resumes lest the state "
                        + "age grow unchecked";
            }
            replaySeen |= saturated;
            if (ended != null) {
                restartedAt = null;
                replayEndedAt = now;
            }
        }
        boolean replayInWindow = restartedAt != null
                || (replayEndedAt != null && now.isBefore(replayEndedAt.plus(rateWindow)));
        if (replayInWindow && restartedAt == null) {
            bursts.judgeSettling((ended != null ? latest : load).inputRate());
        }
        if (!replayInWindow) {
            if (withoutCheckpoint && load.inputRate() > 0) {
                capacityWithoutCheckpoint = load.capacity();
                capacityWithoutCheckpointAt = now;
                if (hottestBusy(load) >= LOADED_BUSY) {
                    loadedCapacity.record(now, load.capacity());
                }
            }
            bursts.record(now, load.inputRate(), backPressured(load), sourceRecords);
            if (!backPressured(load)) {
                peak.record(now, load.inputRate());
            }
        }
        return ended;
    }

    /**
     * The mean rate at which the sources read since the restarted attempt began, taken when its
     * replay ended: a measurement of the replay capacity that does not depend on how much of a
     * short replay one rate window happened to cover.
     */
    void replayMeasured(Instant now, double recordsPerSecond) {
        replayRate.record(now, recordsPerSecond);
    }

    boolean replaying() {
        return restartedAt != null;
    }

    /** The highest input rate remembered, or 0. */
    double peakInputRate(Instant now) {
        return peak.value(now);
    }

    /** What the remembered bursts say about the input ahead, or null before a burst ended. */
    @Nullable
    BurstOutlook burstOutlook(Instant now) {
        return bursts.outlook(now);
    }

    /**
     * The capacity a replay would have: the highest of {@code current}, the latest capacity
     * measured without a checkpoint, the highest measured without one under load, and the fastest
     * recent replay.
     */
    double replayCapacity(Instant now, double current) {
        double capacity = Math.max(Math.max(current, replayRate.value(now)), loadedCapacity.value(now));
        if (capacityWithoutCheckpointAt == null
                || Duration.between(capacityWithoutCheckpointAt, now).compareTo(memory) > 0) {
            return capacity;
        }
        return Math.max(capacity, capacityWithoutCheckpoint);
    }

    private static double hottestBusy(LoadEstimator.Load load) {
        return load.subtasks().stream().mapToDouble(SubtaskLoad::busyRatio).max().orElse(0);
    }

    private static double hottest(LoadEstimator.Load load) {
        return load.subtasks().stream().mapToDouble(SubtaskLoad::load).max().orElse(0);
    }

    private static boolean backPressured(LoadEstimator.Load load) {
        return load.subtasks().stream().anyMatch(s -> s.backPressureRatio() > BACKLOG_BACK_PRESSURE);
    }
}
