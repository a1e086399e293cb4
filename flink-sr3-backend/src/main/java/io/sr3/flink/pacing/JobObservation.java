package io.sr3.flink.pacing;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * One job's load as its pacer observes it over time, with an injected clock: turns each poll
 * into a fresh load over the rate window or says why there is none, notices restarts, and
 * assembles the {@link PacingInputs} from what it remembers ({@link LoadMemory} for rates and
 * replays, {@link InputHistory} for the backlog).
 *
 * <p>Restarts are known from Flink's restart count ({@code numRestarts}) once the job reports it;
 * only before that do counters that go back stand for one (Flink's metric store fills in a new
 * attempt subtask by subtask, so counters can go back without a restart). After a restart the
 * metric store still returns the old attempt's counters for a while: they are skipped.
 */
@NotThreadSafe
final class JobObservation {

    private static final Logger LOG = LoggerFactory.getLogger(JobObservation.class);

    /** Shortest time rates and busy ratios are averaged over. */
    static final Duration MIN_RATE_WINDOW = Duration.ofSeconds(1);
    /** Restarts the observed MTBF is averaged over. */
    static final int MTBF_WINDOW = 5;

    /** What one poll gave: a fresh load, nothing to decide on yet, or metrics missing or stale for too long. */
    sealed interface Outcome permits Fresh, Waiting, Stale {}

    record Fresh(LoadEstimator.Load load) implements Outcome {}

    record Waiting() implements Outcome {}

    record Stale(String why) implements Outcome {}

    private static final Waiting WAITING = new Waiting();

    /** Counters seen at one moment. */
    private record Sample(Instant at, JobCounters counters, boolean checkpointRunning) {}

    private final String jobId;
    private final PacingSettings settings;
    private final Clock clock;
    /** Rates are taken over at least this much time, so that one late metric sample does not swing them. */
    private final Duration rateWindow;
    private final LoadMemory loadMemory;
    private final InputHistory inputHistory;

    private final List<Sample> samples = new ArrayList<>();
    private Instant now;
    @Nullable private JobCounters previousCounters;
    @Nullable private Instant lastFreshSample;
    @Nullable private Instant runningSince;
    @Nullable private Instant missingSince;
    @Nullable private LoadEstimator.Load lastLoad;
    private double lastCapacity = Double.MAX_VALUE;
    private double lastInputRate;
    /** The trigger time of the latest completed checkpoint seen: a restart restores it. */
    @Nullable private Instant lastCheckpointTriggered;
    /** The recovery time the last decision expected, or null. */
    @Nullable private Duration expectedRecovery;

    /** When the job was first seen running, then each restart. */
    private final Deque<Instant> restartTimes = new ArrayDeque<>();
    private long restarts;
    /** A restart the job was seen in, while the new attempt's counters have not shown up yet. */
    @Nullable private Instant awaitingNewAttempt;
    /** Flink's restart count at the last poll that had it; {@link JobView#UNKNOWN_RESTARTS} before. */
    private long restartCount = JobView.UNKNOWN_RESTARTS;

    JobObservation(String jobId, PacingSettings settings, Clock clock) {
        this.jobId = jobId;
        this.settings = settings;
        this.clock = clock;
        this.now = clock.instant();
        Duration fourPeriods = settings.decisionPeriod().multipliedBy(4);
        this.rateWindow = fourPeriods.compareTo(MIN_RATE_WINDOW) > 0 ? fourPeriods : MIN_RATE_WINDOW;
        this.loadMemory = new LoadMemory(settings.peakMemory(), settings.maxRecoveryTime(), rateWindow);
        this.inputHistory = new InputHistory(settings.peakMemory());
    }

    /** Takes in one poll of the running (or restarting) job. */
    Outcome observe(JobView view) {
        now = clock.instant();
        if (countWentUp(view.restartCount())) {
            // The failure came after the last counters that moved on (or now, before any).
            restarted(lastFreshSample != null ? lastFreshSample : now, true, "Flink's restart count is " + view.restartCount());
        }
        JobCounters counters = view.counters();
        if (counters == null) {
            // Restarting or not yet running: nothing to measure; counters restart with the new attempts.
            if (runningSince != null && !countingRestarts()) {
                restarted(now, true, "the job is " + view.state());
            }
            forgetSamples();
            runningSince = null;
            return WAITING;
        }
        if (fromBeforeLastRestart(counters)) {
            LOG.debug("[pacer {}] skipping counters that ran for {} ms, longer than the new attempt: the old "
                    + "attempt's, still in Flink's metric store", jobId, Math.round(counters.longestRunningMs()));
            return WAITING;
        }
        if (runningSince == null) {
            runningSince = now;
            lastFreshSample = now;
            if (restartTimes.isEmpty()) {
                restartTimes.add(now);
            }
        }
        LoadEstimator.Result result = LoadEstimator.estimate(previousCounters, counters);
        if (result instanceof LoadEstimator.Missing missing) {
            // Right after a (re)start Flink has not fetched every subtask's metrics yet: only a long gap is a fault.
            missingSince = missingSince == null ? now : missingSince;
            forgetSamples();
            Duration missingFor = Duration.between(missingSince, now);
            return missingFor.compareTo(settings.staleAfter()) > 0
                    ? new Stale(missing.what() + " for " + missingFor.toMillis() + " ms")
                    : WAITING;
        }
        missingSince = null;
        if (result instanceof LoadEstimator.Reset) {
            if (previousCounters != null && !countingRestarts()
                    && counters.longestRunningMs() < previousCounters.longestRunningMs()) {
                restarted(lastFreshSample, false, "its counters went back"); // a restart between two polls
            }
            inputHistory.attemptStarted(now, counters.sourceRecords());
            previousCounters = counters;
            samples.clear();
            samples.add(new Sample(now, counters, view.checkpointsInProgress() > 0));
            lastFreshSample = now;
            return WAITING;
        }
        if (result instanceof LoadEstimator.NoNewSample) {
            Duration unchanged = Duration.between(lastFreshSample, now);
            return unchanged.compareTo(settings.staleAfter()) > 0
                    ? new Stale("metrics have not changed for " + unchanged.toMillis() + " ms (stale; is "
                            + "metrics.fetcher.update-interval longer than " + settings.staleAfter() + "?)")
                    : WAITING;
        }
        LoadEstimator.Load latest = (LoadEstimator.Load) result;
        inputHistory.record(lastFreshSample, now, latest.inputRate());
        previousCounters = counters;
        lastFreshSample = now;
        samples.add(new Sample(now, counters, view.checkpointsInProgress() > 0));
        while (samples.size() > 2 && !samples.get(1).at().isAfter(now.minus(rateWindow))) {
            samples.remove(0);
        }
        LoadEstimator.Load load = LoadEstimator.estimate(samples.get(0).counters(), counters) instanceof LoadEstimator.Load l
                ? l
                : latest;
        String replayEnded = loadMemory.observe(now, load, latest, withoutCheckpoint(view), counters.sourceRecords());
        if (replayEnded != null) {
            double replayRate = counters.sourceRateSinceStart();
            loadMemory.replayMeasured(now, replayRate);
            LOG.info("[pacer {}] {} (the sources read {} records/s on average since the restart); pacing again", jobId,
                    replayEnded, Math.round(replayRate));
            // The window holds the replay, whose rate is the backlog's, not the input's: start it afresh.
            samples.subList(0, samples.size() - 1).clear();
            load = latest;
        }
        lastLoad = load;
        lastInputRate = load.inputRate();
        if (load.inputRate() > 0) {
            lastCapacity = loadMemory.replayCapacity(now, load.capacity());
        }
        return new Fresh(load);
    }

    /** The policy's inputs for a fresh {@code load}, at the moment of the last poll. */
    PacingInputs inputs(LoadEstimator.Load load, List<CheckpointSample> recent, boolean checkpointPending,
            Duration restore) {
        CheckpointSample last = recent.isEmpty() ? null : recent.get(recent.size() - 1);
        if (last != null) {
            lastCheckpointTriggered = last.triggered();
        }
        double backlog = inputHistory.recordsSince(last == null ? runningSince : last.triggered(), now, load.inputRate());
        return new PacingInputs(load.inputRate(), lastCapacity, load.subtasks(), recent, checkpointPending, restore,
                runningSince, observedMtbf(), loadMemory.peakInputRate(now), loadMemory.replaying(), backlog,
                loadMemory.burstOutlook(now));
    }

    /** The policy decided on the last inputs: a restart before the next decision expects its recovery time. */
    void decided(Decision decision) {
        expectedRecovery = decision.estimatedRecovery();
    }

    /** The job was out of reach: the next counters start a new baseline. */
    void forgetSamples() {
        previousCounters = null;
        samples.clear();
    }

    /** Restarts seen so far. */
    long restarts() {
        return restarts;
    }

    /** Mean time between the job's recent restarts, once two were seen; null before. */
    @Nullable
    Duration observedMtbf() {
        int count = restartTimes.size() - 1;
        return count < 2 ? null : Duration.between(restartTimes.getFirst(), restartTimes.getLast()).dividedBy(count);
    }

    @Nullable
    LoadEstimator.Load lastLoad() {
        return lastLoad;
    }

    /**
     * The job restarted (at {@code at} at the latest; {@code seenRestarting} when seen restarting,
     * not only its counters going back): its replay runs until the sources have read again what
     * arrived since the restored checkpoint, and the next counters start a new baseline.
     */
    private void restarted(Instant at, boolean seenRestarting, String how) {
        restarts++;
        awaitingNewAttempt = seenRestarting ? at : null;
        restartTimes.add(at);
        while (restartTimes.size() > MTBF_WINDOW + 1) {
            restartTimes.removeFirst();
        }
        Instant restored = lastCheckpointTriggered != null ? lastCheckpointTriggered : runningSince;
        double backlog = restored == null ? 0 : inputHistory.recordsSince(restored, at, lastInputRate);
        loadMemory.restarted(now, expectedRecovery, backlog);
        inputHistory.restarted(at);
        forgetSamples();
        Duration mtbf = observedMtbf();
        LOG.info("[pacer {}] the job restarted ({}); pacing waits while it reads again about {} records that arrived "
                        + "since the checkpoint triggered at {}; observed MTBF {}", jobId, how, Math.round(backlog),
                restored, mtbf == null ? "not known before two restarts" : mtbf);
    }

    /**
     * Whether Flink's restart count went up since the last poll that had one. The first count seen
     * is where counting starts; a count that goes back is a new JobManager's, and counting goes on from it.
     */
    boolean countWentUp(long count) {
        if (count == JobView.UNKNOWN_RESTARTS) {
            return false;
        }
        boolean up = restartCount != JobView.UNKNOWN_RESTARTS && count > restartCount;
        restartCount = count;
        return up;
    }

    /** Whether restarts are known from Flink's restart count, so that counters going back are none. */
    boolean countingRestarts() {
        return restartCount != JobView.UNKNOWN_RESTARTS;
    }

    /**
     * Whether counters are still the old attempt's: a subtask of the new attempt cannot have run
     * longer than the time since the restart (plus a decision period and a second, for a restart
     * noticed late). Checked until the first counters of the new attempt, for a bounded time only,
     * so that a check that misfired does not blind the pacer.
     */
    private boolean fromBeforeLastRestart(JobCounters counters) {
        if (awaitingNewAttempt == null) {
            return false;
        }
        Duration since = Duration.between(awaitingNewAttempt, now);
        Duration slack = settings.decisionPeriod().plusSeconds(1);
        if (since.compareTo(settings.maxRecoveryTime().plus(settings.staleAfter())) <= 0
                && counters.longestRunningMs() > since.plus(slack).toMillis()) {
            return true;
        }
        awaitingNewAttempt = null;
        return false;
    }

    /** Whether no checkpoint ran during the current rate window, neither at a sample nor as the last completed one. */
    private boolean withoutCheckpoint(JobView view) {
        for (Sample s : samples) {
            if (s.checkpointRunning()) {
                return false;
            }
        }
        List<CheckpointSample> completed = view.completedCheckpoints();
        if (completed.isEmpty()) {
            return true;
        }
        CheckpointSample last = completed.get(completed.size() - 1);
        return last.triggered().plus(last.duration()).isBefore(samples.get(0).at());
    }
}
