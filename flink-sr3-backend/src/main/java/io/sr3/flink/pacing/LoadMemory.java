package io.sr3.flink.pacing;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * What a job's pacer remembers about its load beyond the current rate window, for
 * {@code sr3.pacing.peak-memory}, and whether the job still replays after a restart.
 * <ul>
 *   <li>Catch-up: the replay runs until no subtask is saturated over the last sample interval,
 *       once the replay was seen saturated or the sources read the backlog again; for at most
 *       twice the recovery the model expected and at most the bound (a job still saturated then is
 *       busy with new input, not the replay).
 *   <li>Capacity: a replay runs without a checkpoint competing for CPU, so the model takes the
 *       highest of the current capacity, the latest measured without a checkpoint, the highest
 *       measured without one under load (at low load per-record overhead inflates busy time) and
 *       the sources' rate in recent replays.
 *   <li>Peak: the highest input rate, leaving out back-pressured sources (they read what the job
 *       takes, not what arrives).
 * </ul>
 * Rates during a replay and one rate window after it are neither capacities nor peaks.
 */
@NotThreadSafe
final class LoadMemory {

    /** A subtask at least this busy has its per-record overhead amortized. */
    static final double LOADED_BUSY = 0.5;
    /** A subtask back-pressured more than this works off a backlog, not the input. */
    static final double BACKLOG_BACK_PRESSURE = 0.2;
    /** After a restart, the replay runs until no subtask is this loaded any more. */
    static final double REPLAY_LOAD = 0.9;

    private record Point(Instant at, double value) {}

    private final Duration memory;
    private final Duration bound;
    private final Duration rateWindow;
    private final Highest peak = new Highest();
    private final Highest replayRate = new Highest();
    private final Highest loadedCapacity = new Highest();
    private Point capacityWithoutCheckpoint = new Point(Instant.MIN, 0);
    private Instant now = Instant.MIN;
    @Nullable private Instant restartedAt, replayEndedAt;
    private double replayBacklog;
    private boolean replaySeen;
    private Duration replayLimit = Duration.ZERO;

    LoadMemory(Duration memory, Duration bound, Duration rateWindow) {
        this.memory = memory;
        this.bound = bound;
        this.rateWindow = rateWindow;
    }

    /**
     * The job restarted: it replays until caught up, and not before the sources read {@code backlog}
     * again (tasks that still restore their state look idle). {@code expectedRecovery}: the model's, or null.
     */
    void restarted(Instant now, @Nullable Duration expectedRecovery, double backlog) {
        this.now = now;
        restartedAt = now;
        replayBacklog = backlog;
        replaySeen = false;
        Duration twice = expectedRecovery == null ? bound : expectedRecovery.multipliedBy(2);
        replayLimit = twice.compareTo(bound) < 0 ? twice : bound;
    }

    /**
     * Takes in a fresh load over the rate window and over the last sample interval ({@code latest},
     * which tells when a replay ended); returns why a replay ended with it, or null.
     */
    @Nullable
    String observe(Instant now, LoadEstimator.Load load, LoadEstimator.Load latest, boolean withoutCheckpoint,
            JobCounters counters) {
        this.now = now;
        String ended = null;
        if (restartedAt != null) {
            if (withoutCheckpoint) {
                replayRate.record(load.inputRate());
            }
            Duration since = Duration.between(restartedAt, now);
            boolean saturated = max(latest.subtasks(), SubtaskLoad::load) >= REPLAY_LOAD;
            if (!saturated && (replaySeen || counters.sourceRecords() >= replayBacklog)) {
                ended = "caught up " + since.toMillis() + " ms after the restart, with " + counters.sourceRecords()
                        + " records read again (backlog estimated at " + Math.round(replayBacklog) + ")";
            } else if (since.compareTo(replayLimit) > 0) {
                ended = "still saturated " + since.toMillis() + " ms after the restart, longer than the replay could "
                        + "take (" + replayLimit.toMillis() + " ms): busy with new input, so pacing resumes";
            }
            replaySeen |= saturated;
        }
        if (ended != null) {
            restartedAt = null;
            replayEndedAt = now;
            // The sources' mean rate since the restart measures the replay, however much of it the window covered.
            replayRate.record(counters.sourceRateSinceStart());
        }
        if (restartedAt == null && (replayEndedAt == null || !now.isBefore(replayEndedAt.plus(rateWindow)))) {
            if (withoutCheckpoint && load.inputRate() > 0) {
                capacityWithoutCheckpoint = new Point(now, load.capacity());
                if (max(load.subtasks(), SubtaskLoad::busyRatio) >= LOADED_BUSY) {
                    loadedCapacity.record(load.capacity());
                }
            }
            if (max(load.subtasks(), SubtaskLoad::backPressureRatio) <= BACKLOG_BACK_PRESSURE) {
                peak.record(load.inputRate());
            }
        }
        return ended;
    }

    boolean replaying() {
        return restartedAt != null;
    }

    /** The highest input rate remembered, or 0. */
    double peakInputRate() {
        return peak.value();
    }

    /** The capacity a replay would have, at least {@code current}. */
    double replayCapacity(double current) {
        double capacity = Math.max(Math.max(current, replayRate.value()), loadedCapacity.value());
        return remembered(capacityWithoutCheckpoint.at()) ? Math.max(capacity, capacityWithoutCheckpoint.value()) : capacity;
    }

    private boolean remembered(Instant at) {
        return !at.isBefore(now.minus(memory));
    }

    private static double max(List<SubtaskLoad> subtasks, java.util.function.ToDoubleFunction<SubtaskLoad> ratio) {
        return subtasks.stream().mapToDouble(ratio).max().orElse(0);
    }

    /** The highest value recorded within the memory: a queue of the values that can still become it. */
    private final class Highest {
        private final Deque<Point> candidates = new ArrayDeque<>();

        void record(double value) {
            while (!candidates.isEmpty() && candidates.peekLast().value() <= value) {
                candidates.pollLast();
            }
            candidates.addLast(new Point(now, value));
        }

        double value() {
            while (!candidates.isEmpty() && !remembered(candidates.peekFirst().at())) {
                candidates.pollFirst();
            }
            return candidates.isEmpty() ? 0 : candidates.peekFirst().value();
        }
    }
}
