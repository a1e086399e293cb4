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
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.stream.Stream;

/**
 * One job's load as its pacer observes it over time, with an injected clock: turns each poll into
 * a fresh load over the rate window or says why there is none, notices restarts, counts the
 * backlog and assembles the {@link PacingInputs}, with {@link LoadMemory} for what lasts longer.
 * Restarts come from Flink's {@code numRestarts} once the job reports it, before that from a job
 * seen restarting or counters whose running time went back (the metric store fills in a new
 * attempt subtask by subtask, so counters alone can go back without a restart).
 */
@NotThreadSafe
final class JobObservation {

    private static final Logger LOG = LoggerFactory.getLogger(JobObservation.class);

    /** Shortest time rates and busy ratios are averaged over. */
    static final Duration MIN_RATE_WINDOW = Duration.ofSeconds(1);
    /** Restarts the observed MTBF is averaged over. */
    static final int MTBF_WINDOW = 5;
    /** Source counts kept for the backlog; beyond them it is counted at the current rate. */
    private static final int MAX_COUNTS = 10_000;

    /** What one poll gave: a fresh load, nothing to decide on yet, or metrics missing or stale for too long. */
    sealed interface Outcome permits Fresh, Waiting, Stale {}

    record Fresh(LoadEstimator.Load load) implements Outcome {}
    record Waiting() implements Outcome {}
    record Stale(String why) implements Outcome {}

    private static final Waiting WAITING = new Waiting();
    private record Sample(Instant at, JobCounters counters, boolean checkpointRunning) {}
    private record Point(Instant at, double value) {}

    private final String jobId;
    private final PacingSettings settings;
    private final Clock clock;
    private final Duration rateWindow;
    private final LoadMemory memory;
    private final List<Sample> samples = new ArrayList<>();
    /** The sources' record count over time; after a restart it starts at (restart, 0). */
    private final List<Point> sourceCounts = new ArrayList<>();
    /** When the job was first seen running, then each restart. */
    private final Deque<Instant> restartTimes = new ArrayDeque<>();

    private Instant now;
    @Nullable private JobCounters previousCounters;
    @Nullable private Instant lastFreshSample, runningSince, missingSince, lastCheckpointTriggered;
    /** A restart the job was seen in, while the new attempt's counters have not shown up yet. */
    @Nullable private Instant awaitingNewAttempt;
    @Nullable private LoadEstimator.Load lastLoad;
    @Nullable private SubtaskLoad hottest;
    @Nullable private Duration expectedRecovery;
    private double lastCapacity = Double.MAX_VALUE, lastInputRate;
    /** Whether the counts start at a restart: the sources re-read what came after the restored checkpoint. */
    private boolean countsFromRestart;
    /** Restarts seen, and Flink's restart count at the last poll that had it. */
    private long restarts, restartCount = JobView.UNKNOWN_RESTARTS;

    JobObservation(String jobId, PacingSettings settings, Clock clock) {
        this.jobId = jobId;
        this.settings = settings;
        this.clock = clock;
        this.now = clock.instant();
        Duration fourPeriods = settings.decisionPeriod().multipliedBy(4);
        this.rateWindow = fourPeriods.compareTo(MIN_RATE_WINDOW) > 0 ? fourPeriods : MIN_RATE_WINDOW;
        this.memory = new LoadMemory(settings.peakMemory(), settings.maxRecoveryTime(), rateWindow);
    }

    /** Takes in one poll of the running (or restarting) job. */
    Outcome observe(JobView view) {
        now = clock.instant();
        if (countWentUp(view.restartCount())) {
            restarted(lastFreshSample != null ? lastFreshSample : now, true, "Flink's restart count is " + view.restartCount());
        }
        JobCounters counters = view.counters();
        if (counters == null) {
            if (runningSince != null && !countingRestarts()) {
                restarted(now, true, "the job is " + view.state());
            }
            forgetSamples();
            runningSince = null;
            return WAITING;
        }
        if (fromBeforeLastRestart(counters)) {
            return WAITING; // the old attempt's, still in Flink's metric store
        }
        if (runningSince == null) {
            runningSince = now;
            lastFreshSample = now;
            if (restartTimes.isEmpty()) {
                restartTimes.add(now);
            }
        }
        LoadEstimator.Result result = LoadEstimator.estimate(previousCounters, counters);
        if (result instanceof LoadEstimator.Missing missing) { // only a long gap is a fault, not a (re)start
            missingSince = missingSince == null ? now : missingSince;
            forgetSamples();
            Duration missingFor = Duration.between(missingSince, now);
            return missingFor.compareTo(settings.staleAfter()) > 0
                    ? new Stale(missing.what() + " for " + missingFor.toMillis() + " ms") : WAITING;
        }
        missingSince = null;
        if (result instanceof LoadEstimator.NoNewSample) {
            Duration unchanged = Duration.between(lastFreshSample, now);
            return unchanged.compareTo(settings.staleAfter()) > 0 ? new Stale("metrics have not changed for "
                    + unchanged.toMillis() + " ms (is metrics.fetcher.update-interval longer than "
                    + settings.staleAfter() + "?)") : WAITING;
        }
        if (result instanceof LoadEstimator.Reset && previousCounters != null && !countingRestarts()
                && counters.longestRunningMs() < previousCounters.longestRunningMs()) {
            restarted(lastFreshSample, false, "its counters went back"); // a restart between two polls
        }
        count(counters.sourceRecords());
        previousCounters = counters;
        lastFreshSample = now;
        samples.add(new Sample(now, counters, view.checkpointsInProgress() > 0));
        if (!(result instanceof LoadEstimator.Load latest)) {
            samples.subList(0, samples.size() - 1).clear(); // a new baseline
            return WAITING;
        }
        while (samples.size() > 2 && !samples.get(1).at().isAfter(now.minus(rateWindow))) {
            samples.remove(0);
        }
        LoadEstimator.Load load = LoadEstimator.estimate(samples.get(0).counters(), counters) instanceof LoadEstimator.Load l
                ? l : latest;
        String replayEnded = memory.observe(now, load, latest, withoutCheckpoint(view), counters);
        if (replayEnded != null) {
            LOG.info("[pacer {}] {}; pacing again", jobId, replayEnded);
            // The window holds the replay, whose rate is the backlog's, not the input's: start it afresh.
            samples.subList(0, samples.size() - 1).clear();
            load = latest;
        }
        lastLoad = load;
        lastInputRate = load.inputRate();
        // The latest interval counts too: at a burst's onset the window still holds the quiet time before it.
        hottest = Stream.concat(load.subtasks().stream(), latest.subtasks().stream())
                .max(Comparator.comparingDouble(SubtaskLoad::load)).orElse(null);
        if (load.inputRate() > 0) {
            lastCapacity = memory.replayCapacity(load.capacity());
        }
        return new Fresh(load);
    }

    /** The policy's inputs for a fresh {@code load}, at the moment of the last poll. */
    PacingInputs inputs(LoadEstimator.Load load, List<CheckpointSample> recent, boolean pending, Duration restore) {
        CheckpointSample last = recent.isEmpty() ? null : recent.get(recent.size() - 1);
        lastCheckpointTriggered = last != null ? last.triggered() : lastCheckpointTriggered;
        double backlog = recordsSince(last == null ? runningSince : last.triggered(), load.inputRate());
        return new PacingInputs(load.inputRate(), lastCapacity, hottest, recent, pending, restore, runningSince,
                observedMtbf(), memory.peakInputRate(), memory.replaying(), backlog);
    }

    /** The policy decided: a restart before the next decision expects this recovery time. */
    void decided(Decision decision) {
        expectedRecovery = decision.estimatedRecovery();
    }

    /** The next counters start a new baseline (the job was out of reach). */
    void forgetSamples() {
        previousCounters = null;
        samples.clear();
    }

    long restarts() {
        return restarts;
    }

    /** Mean time between the job's recent restarts, once two were seen; null before. */
    @Nullable
    Duration observedMtbf() {
        int count = restartTimes.size() - 1;
        return count < 2 ? null : Duration.between(restartTimes.getFirst(), restartTimes.getLast()).dividedBy(count);
    }

    @Nullable // for tests
    LoadEstimator.Load lastLoad() {
        return lastLoad;
    }

    /** The job restarted at {@code at} at the latest ({@code seenRestarting}: not only its counters went back). */
    private void restarted(Instant at, boolean seenRestarting, String how) {
        restarts++;
        awaitingNewAttempt = seenRestarting ? at : null;
        restartTimes.add(at);
        while (restartTimes.size() > MTBF_WINDOW + 1) {
            restartTimes.removeFirst();
        }
        Instant restored = lastCheckpointTriggered != null ? lastCheckpointTriggered : runningSince;
        double backlog = restored == null ? 0 : recordsSince(restored, lastInputRate);
        memory.restarted(now, expectedRecovery, backlog);
        sourceCounts.clear();
        sourceCounts.add(new Point(at, 0));
        countsFromRestart = true;
        forgetSamples();
        LOG.info("[pacer {}] the job restarted ({}); pacing waits while it reads again about {} records that arrived "
                + "since the checkpoint triggered at {}; observed MTBF {}", jobId, how, Math.round(backlog),
                restored, observedMtbf());
    }

    /** The backlog since {@code since}: the records the sources read since, at {@code gapRate} before the first count. */
    private double recordsSince(@Nullable Instant since, double gapRate) {
        if (since == null || sourceCounts.isEmpty()) {
            return 0;
        }
        double countAt = sourceCounts.get(0).value() - (countsFromRestart ? 0 : gapRate) * seconds(since,
                sourceCounts.get(0).at());
        Point previous = null;
        for (Point p : sourceCounts) {
            if (!p.at().isAfter(since)) {
                countAt = p.value();
            } else {
                if (previous != null) {
                    countAt = previous.value() + (p.value() - previous.value()) * seconds(previous.at(), since)
                            / seconds(previous.at(), p.at());
                }
                break;
            }
            previous = p;
        }
        return Math.max(0, sourceCounts.get(sourceCounts.size() - 1).value() - countAt);
    }

    /** The sources' count now; a count that went back (a metric glitch) starts the counts afresh. */
    private void count(long records) {
        if (!sourceCounts.isEmpty() && records < sourceCounts.get(sourceCounts.size() - 1).value()) {
            sourceCounts.clear();
            countsFromRestart = false;
        }
        sourceCounts.add(new Point(now, records));
        while (sourceCounts.size() > MAX_COUNTS || (sourceCounts.size() > 2 && lastCheckpointTriggered != null
                && !sourceCounts.get(1).at().isAfter(lastCheckpointTriggered))) {
            sourceCounts.remove(0);
        }
    }

    /** Whether Flink's restart count went up; counting starts at the first count, and goes on from one that went back. */
    boolean countWentUp(long count) {
        if (count == JobView.UNKNOWN_RESTARTS) {
            return false;
        }
        boolean up = restartCount != JobView.UNKNOWN_RESTARTS && count > restartCount;
        restartCount = count;
        return up;
    }

    /** Whether restarts are known from Flink's count, so that counters going back are none. */
    boolean countingRestarts() {
        return restartCount != JobView.UNKNOWN_RESTARTS;
    }

    /**
     * Whether counters are still the old attempt's: a new attempt's subtask cannot have run longer
     * than the time since the restart (plus slack). Checked for at most bound + stale-after, so that
     * a misfiring check cannot blind the pacer.
     */
    private boolean fromBeforeLastRestart(JobCounters counters) {
        if (awaitingNewAttempt == null) {
            return false;
        }
        Duration since = Duration.between(awaitingNewAttempt, now);
        if (since.compareTo(settings.maxRecoveryTime().plus(settings.staleAfter())) <= 0
                && counters.longestRunningMs() > since.plus(settings.decisionPeriod()).plusSeconds(1).toMillis()) {
            return true;
        }
        awaitingNewAttempt = null;
        return false;
    }

    /** Whether no checkpoint ran during the rate window, neither at a sample nor as the last completed one. */
    private boolean withoutCheckpoint(JobView view) {
        if (samples.stream().anyMatch(Sample::checkpointRunning)) {
            return false;
        }
        List<CheckpointSample> completed = view.completedCheckpoints();
        CheckpointSample last = completed.isEmpty() ? null : completed.get(completed.size() - 1);
        return last == null || last.triggered().plus(last.duration()).isBefore(samples.get(0).at());
    }

    private static double seconds(Instant from, Instant to) {
        return Math.max(0, Duration.between(from, to).toNanos() / 1e9);
    }
}
