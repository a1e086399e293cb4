package io.sr3.flink.pacing;

import io.sr3.flink.pacing.Decision.Reason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Drives {@link PacingPolicy} for one job: every decision period it polls the job through a
 * {@link JobEndpoint}, turns counters into load ({@link LoadEstimator}), asks the policy and
 * triggers a checkpoint when told to. Flink's own periodic checkpoints keep running underneath as
 * the safety maximum; the pacer only adds checkpoints.
 *
 * <p>Faults: when the REST API is unreachable, a subtask reports no metrics or the metrics stop
 * changing, the pacer triggers nothing (checkpoints continue at Flink's periodic interval) and
 * says so once per episode, and once more when pacing resumes. It stops when the job reaches a
 * terminal state, when the REST API no longer knows the job, or after the REST API has been
 * unreachable for {@link #GIVE_UP_AFTER}.
 *
 * <p>Thread model: {@link #tick} runs on the single thread of the given executor; the MBean getters
 * read volatile fields and atomics from any thread.
 */
@ThreadSafe
public final class CheckpointPacer implements CheckpointPacerMXBean, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointPacer.class);

    /** A cluster whose REST API stays away this long is gone; the job is not ours to pace any more. */
    static final Duration GIVE_UP_AFTER = Duration.ofMinutes(2);
    /** Shortest time rates and busy ratios are averaged over. */
    static final Duration MIN_RATE_WINDOW = Duration.ofSeconds(1);
    /** Recent completed checkpoints handed to the policy. */
    private static final int HISTORY = 5;

    private final String jobId;
    private final PacingSettings settings;
    private final PacingPolicy policy;
    private final JobEndpoint endpoint;
    private final Clock clock;
    private final ScheduledExecutorService executor;
    private final Runnable onStop;
    private final PacerStatusPublisher publisher;
    private final RestoreRateSource restoreRates;

    /** Rates are taken over at least this much time, so that one late metric sample does not swing them. */
    private final Duration rateWindow;

    // Confined to the executor thread.
    private final List<Sample> samples = new ArrayList<>();
    @Nullable private JobCounters previousCounters;
    @Nullable private Instant lastFreshSample;
    @Nullable private Instant runningSince;
    @Nullable private Instant lastRequest;
    @Nullable private Instant unreachableSince;
    @Nullable private Instant missingSince;
    @Nullable private LoadEstimator.Load lastLoad;
    private final RestartClock restarts = new RestartClock();
    private long stuckWarnedFor = -1;
    private boolean restoreMeasured;
    private boolean seenJob;
    private boolean lastReachable = true;
    private double lastCapacity = Double.MAX_VALUE;
    private final LoadMemory loadMemory;
    private final InputHistory inputHistory;
    /** The trigger time of the latest completed checkpoint seen: a restart restores it. */
    @Nullable private Instant lastCheckpointTriggered;
    private double lastInputRate;

    // Read by MBean getters.
    private volatile long ageBoundMillis = -1;
    private volatile long estimatedRecoveryMillis = -1;
    private volatile long checkpointAgeMillis = -1;
    private volatile boolean boundUnreachable;
    @Nullable private volatile String fallbackReason;
    private volatile String lastReason = "none yet";
    private volatile boolean stopped;
    private volatile long restoreBytesPerSecond = -1;
    @Nullable private volatile Duration observedMtbfSnapshot;
    private final AtomicLong decisions = new AtomicLong();
    private final Map<Reason, AtomicLong> triggers = new EnumMap<>(Reason.class);

    CheckpointPacer(String jobId, PacingSettings settings, JobEndpoint endpoint, Clock clock,
            ScheduledExecutorService executor, Runnable onStop) {
        this(jobId, settings, endpoint, clock, executor, onStop, PacerStatusPublisher.NONE, RestoreRateSource.CONFIGURED_ONLY);
    }

    CheckpointPacer(String jobId, PacingSettings settings, JobEndpoint endpoint, Clock clock,
            ScheduledExecutorService executor, Runnable onStop, PacerStatusPublisher publisher,
            RestoreRateSource restoreRates) {
        this.jobId = jobId;
        this.publisher = publisher;
        this.restoreRates = restoreRates;
        this.settings = settings;
        this.policy = new PacingPolicy(settings.policySettings(), clock);
        this.endpoint = endpoint;
        this.clock = clock;
        this.executor = executor;
        this.onStop = onStop;
        Duration fourPeriods = settings.decisionPeriod().multipliedBy(4);
        this.rateWindow = fourPeriods.compareTo(MIN_RATE_WINDOW) > 0 ? fourPeriods : MIN_RATE_WINDOW;
        this.loadMemory = new LoadMemory(settings.peakMemory(), settings.maxRecoveryTime(), rateWindow);
        this.inputHistory = new InputHistory(settings.peakMemory());
        for (Reason r : Reason.values()) {
            if (r.triggers()) {
                triggers.put(r, new AtomicLong());
            }
        }
    }

    void start() {
        long period = settings.decisionPeriod().toMillis();
        LOG.info("[pacer {}] started: recovery-time bound {}, failure detection {}, MTBF {}, restore bandwidth {}/s, "
                        + "peak memory {}, deciding every {} ms from {}; Flink's periodic checkpoints "
                        + "stay on as the safety maximum", jobId, settings.maxRecoveryTime(), settings.failureDetection(),
                settings.mtbf(), settings.restoreBytesPerSecond(), settings.peakMemory(), period, endpoint.describe());
        executor.scheduleWithFixedDelay(this::tickSafely, period, period, TimeUnit.MILLISECONDS);
    }

    private void tickSafely() {
        try {
            tick();
        } catch (RuntimeException e) {
            fallBack("unexpected error: " + e);
            LOG.debug("[pacer {}] error in a decision round", jobId, e);
        }
    }

    /** One round: poll, estimate, decide, maybe trigger. */
    void tick() {
        if (stopped) {
            return;
        }
        Instant now = clock.instant();
        JobView view;
        try {
            view = endpoint.poll();
            unreachableSince = null;
            seenJob = true;
        } catch (RestJobEndpoint.RestStatusException e) {
            if (e.status() == 404 && seenJob) {
                stop("the REST API no longer knows the job");
                return;
            }
            unreachable(now, e);
            return;
        } catch (IOException e) {
            unreachable(now, e);
            return;
        }
        if (view.terminal()) {
            stop("job " + view.state());
            return;
        }
        if (restarts.countWentUp(view.restartCount())) {
            // The failure came after the last counters that moved on (or now, before any).
            restarted(now, lastFreshSample != null ? lastFreshSample : now, true,
                    "Flink's restart count is " + view.restartCount());
        }
        if (view.counters() == null) {
            // Restarting or not yet running: nothing to measure; counters restart with the new attempts.
            if (runningSince != null && !restarts.counting()) {
                restarted(now, now, true, "the job is " + view.state());
            }
            previousCounters = null;
            samples.clear();
            runningSince = null;
            return;
        }
        if (restarts.fromBeforeLastRestart(view.counters(), now, settings.decisionPeriod().plusSeconds(1),
                settings.maxRecoveryTime().plus(settings.staleAfter()))) {
            LOG.debug("[pacer {}] skipping counters that ran for {} ms, longer than the new attempt: the old "
                    + "attempt's, still in Flink's metric store", jobId, Math.round(view.counters().longestRunningMs()));
            return;
        }
        if (runningSince == null) {
            runningSince = now;
            lastFreshSample = now;
            restarts.seenRunning(now);
        }
        LoadEstimator.Result result = LoadEstimator.estimate(previousCounters, view.counters());
        if (result instanceof LoadEstimator.Missing missing) {
            // Right after a (re)start Flink has not fetched every subtask's metrics yet: only a gap
            // longer than staleAfter is a fault.
            if (missingSince == null) {
                missingSince = now;
            }
            previousCounters = null;
            samples.clear();
            if (Duration.between(missingSince, now).compareTo(settings.staleAfter()) > 0) {
                fallBack(missing.what() + " for " + Duration.between(missingSince, now).toMillis() + " ms");
            }
            return;
        }
        missingSince = null;
        if (result instanceof LoadEstimator.Reset) {
            if (previousCounters != null && !restarts.counting()
                    && RestartClock.newAttempt(previousCounters, view.counters())) {
                // Counters went back: a restart between two polls.
                restarted(now, lastFreshSample, false, "its counters went back");
            }
            inputHistory.attemptStarted(now, view.counters().sourceRecords());
            previousCounters = view.counters();
            samples.clear();
            samples.add(new Sample(now, view.counters(), view.checkpointsInProgress() > 0));
            lastFreshSample = now;
            return;
        }
        if (result instanceof LoadEstimator.NoNewSample) {
            if (Duration.between(lastFreshSample, now).compareTo(settings.staleAfter()) > 0) {
                fallBack("metrics have not changed for " + Duration.between(lastFreshSample, now).toMillis()
                        + " ms (stale; is metrics.fetcher.update-interval longer than " + settings.staleAfter() + "?)");
            }
            return;
        }
        LoadEstimator.Load latest = (LoadEstimator.Load) result;
        inputHistory.record(lastFreshSample, now, latest.inputRate());
        previousCounters = view.counters();
        lastFreshSample = now;
        samples.add(new Sample(now, view.counters(), view.checkpointsInProgress() > 0));
        while (samples.size() > 2 && !samples.get(1).at().isAfter(now.minus(rateWindow))) {
            samples.remove(0);
        }
        LoadEstimator.Result windowed = LoadEstimator.estimate(samples.get(0).counters(), view.counters());
        LoadEstimator.Load load = windowed instanceof LoadEstimator.Load l ? l : latest;
        String replayEnded = loadMemory.observe(now, load, latest, withoutCheckpoint(view),
                view.counters().sourceRecords());
        if (replayEnded != null) {
            double replayRate = view.counters().sourceRateSinceStart();
            loadMemory.replayMeasured(now, replayRate);
            LOG.info("[pacer {}] {} (the sources read {} records/s on average since the restart); pacing again", jobId,
                    replayEnded, Math.round(replayRate));
            // The rate window holds the replay, whose rate is the backlog's, not the input's:
            // this decision takes the last interval's load, and the window starts afresh.
            samples.subList(0, samples.size() - 1).clear();
            load = latest;
        }
        lastLoad = load;
        lastInputRate = load.inputRate();
        if (load.inputRate() > 0) {
            lastCapacity = loadMemory.replayCapacity(now, load.capacity());
        }
        resume();
        decide(now, view, load);
    }

    private void decide(Instant now, JobView view, LoadEstimator.Load load) {
        List<CheckpointSample> completed = view.completedCheckpoints();
        List<CheckpointSample> recent = completed.subList(Math.max(0, completed.size() - HISTORY), completed.size());
        CheckpointSample last = recent.isEmpty() ? null : recent.get(recent.size() - 1);
        if (last != null) {
            lastCheckpointTriggered = last.triggered();
        }
        Duration restore = RecoveryModel.restoreTime(last == null ? 0 : last.largestShareBytes(), restoreBandwidth());
        boolean pending = view.checkpointsInProgress() > 0 || requestPending(now, last, view.latestFailedTrigger());
        double backlog = inputHistory.recordsSince(last == null ? runningSince : last.triggered(), now, load.inputRate());
        PacingInputs inputs = new PacingInputs(load.inputRate(), lastCapacity, load.subtasks(), recent, pending, restore,
                runningSince, restarts.observedMtbf(), loadMemory.peakInputRate(now), loadMemory.replaying(), backlog,
                loadMemory.burstOutlook(now));
        Decision decision = policy.decide(inputs);
        decisions.incrementAndGet();
        warnIfStuck(view, decision, last);
        ageBoundMillis = decision.ageBound() == null ? -1 : decision.ageBound().toMillis();
        estimatedRecoveryMillis = decision.estimatedRecovery() == null ? -1 : decision.estimatedRecovery().toMillis();
        checkpointAgeMillis = decision.checkpointAge().toMillis();
        boundUnreachable = !decision.boundReachable();
        lastReason = decision.reason().name();
        if (decision.boundReachable() != lastReachable) {
            lastReachable = decision.boundReachable();
            if (lastReachable) {
                LOG.info("[pacer {}] the recovery-time bound {} is reachable again: {}", jobId,
                        settings.maxRecoveryTime(), decision.explanation());
            } else {
                LOG.warn("[pacer {}] the recovery-time bound {} cannot be met, not even with checkpoints back to back: {}",
                        jobId, settings.maxRecoveryTime(), decision.explanation());
            }
        }
        publishStatus(now, decision, last);
        if (!decision.checkpointNow()) {
            LOG.debug("[pacer {}] wait ({}): {}", jobId, decision.reason(), decision.explanation());
            return;
        }
        try {
            endpoint.triggerCheckpoint();
            lastRequest = now;
            triggers.get(decision.reason()).incrementAndGet();
            LOG.info("[pacer {}] checkpoint triggered ({}): {}", jobId, decision.reason(), decision.explanation());
        } catch (IOException e) {
            LOG.warn("[pacer {}] could not trigger a checkpoint ({}): {}; Flink's periodic checkpoints continue", jobId,
                    decision.reason(), e.getMessage());
        }
    }

    private void publishStatus(Instant now, Decision decision, @Nullable CheckpointSample last) {
        Map<Reason, Long> counts = new EnumMap<>(Reason.class);
        triggers.forEach((reason, count) -> counts.put(reason, count.get()));
        long lastCheckpointAt = last == null ? -1 : last.triggered().toEpochMilli();
        publisher.publish(new PacerStatus(ageBoundMillis, estimatedRecoveryMillis, lastCheckpointAt,
                decision.boundReachable(), fallbackReason != null, decisions.get(), counts, now.toEpochMilli()));
    }

    /**
     * Whether no checkpoint ran during the current rate window: neither at any sample in it nor
     * as the last completed checkpoint.
     */
    private boolean withoutCheckpoint(JobView view) {
        Instant windowStart = samples.get(0).at();
        for (Sample s : samples) {
            if (s.checkpointRunning()) {
                return false;
            }
        }
        List<CheckpointSample> completed = view.completedCheckpoints();
        if (!completed.isEmpty()) {
            CheckpointSample last = completed.get(completed.size() - 1);
            return last.triggered().plus(last.duration()).isBefore(windowStart);
        }
        return true;
    }

    /**
     * The job restarted (noticed at {@code now}, at {@code at} at the latest; {@code seenRestarting}
     * when the pacer saw the job restarting, not only its counters going back): its replay runs
     * until the sources have read again what arrived since the restored checkpoint. The next
     * counters start a new baseline.
     */
    private void restarted(Instant now, Instant at, boolean seenRestarting, String how) {
        restarts.restarted(at, seenRestarting);
        observedMtbfSnapshot = restarts.observedMtbf();
        // A failover aborts the running checkpoint, ours included: waiting for it to show up
        // would hold every trigger back for the whole patience.
        lastRequest = null;
        Instant restored = lastCheckpointTriggered != null ? lastCheckpointTriggered : runningSince;
        double backlog = restored == null ? 0 : inputHistory.recordsSince(restored, at, lastInputRate);
        loadMemory.restarted(now, expectedRecovery(), backlog);
        inputHistory.restarted(at);
        previousCounters = null;
        samples.clear();
        LOG.info("[pacer {}] the job restarted ({}); pacing waits while it reads again about {} records that arrived "
                        + "since the checkpoint triggered at {}; observed MTBF {}", jobId, how, Math.round(backlog),
                restored, observedMtbfSnapshot == null ? "not known before two restarts" : observedMtbfSnapshot);
    }

    /** The recovery time the last decision estimated for the state's current age, or null without one. */
    @Nullable
    private Duration expectedRecovery() {
        long millis = estimatedRecoveryMillis;
        return millis < 0 ? null : Duration.ofMillis(millis);
    }

    /** Measured restore rate when the TaskManagers published one recently, else the configured bandwidth. */
    private long restoreBandwidth() {
        OptionalDouble measured = restoreRates.bytesPerSecond();
        long bandwidth = measured.isPresent() ? Math.max(1, Math.round(measured.getAsDouble())) : settings.restoreBytesPerSecond();
        if (measured.isPresent() != restoreMeasured) {
            restoreMeasured = measured.isPresent();
            LOG.info("[pacer {}] restore time now estimated from {} ({} bytes/s)", jobId,
                    restoreMeasured ? "the restores the TaskManagers measured" : "sr3.pacing.restore-bandwidth", bandwidth);
        }
        restoreBytesPerSecond = bandwidth;
        return bandwidth;
    }

    @Override
    public long getRestoreBytesPerSecond() {
        return restoreBytesPerSecond;
    }

    @Override
    public long getObservedMtbfMillis() {
        Duration mtbf = observedMtbfSnapshot;
        return mtbf == null ? -1 : mtbf.toMillis();
    }

    /**
     * A checkpoint that runs past the allowed age (barriers stuck behind back-pressure) breaks the
     * bound and no trigger can help while it runs: say so once per checkpoint, with the way out.
     */
    private void warnIfStuck(JobView view, Decision decision, @Nullable CheckpointSample last) {
        if (view.checkpointsInProgress() == 0 || decision.ageBound() == null
                || decision.checkpointAge().compareTo(decision.ageBound()) <= 0) {
            return;
        }
        long marker = last == null ? 0 : last.triggered().toEpochMilli();
        if (marker != stuckWarnedFor) {
            stuckWarnedFor = marker;
            LOG.warn("[pacer {}] a checkpoint is still in progress while the state is {} ms old, past the allowed {} ms: "
                            + "the recovery-time bound does not hold until it completes. Under back-pressure, unaligned "
                            + "checkpoints (execution.checkpointing.unaligned.enabled: true) let barriers overtake "
                            + "buffered records.", jobId, decision.checkpointAge().toMillis(), decision.ageBound().toMillis());
        }
    }

    /** Whether our last request has not yet shown up as a completed or failed checkpoint. */
    private boolean requestPending(Instant now, @Nullable CheckpointSample last, @Nullable Instant latestFailed) {
        if (lastRequest == null) {
            return false;
        }
        Instant since = lastRequest.minusMillis(50);
        boolean answered = (last != null && !last.triggered().isBefore(since))
                || (latestFailed != null && !latestFailed.isBefore(since));
        Duration patience = settings.staleAfter().plus(settings.maxRecoveryTime());
        return !answered && Duration.between(lastRequest, now).compareTo(patience) < 0;
    }

    private void unreachable(Instant now, IOException e) {
        if (unreachableSince == null) {
            unreachableSince = now;
        }
        previousCounters = null;
        samples.clear();
        fallBack("REST API " + endpoint.describe() + " failed: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
        if (Duration.between(unreachableSince, now).compareTo(GIVE_UP_AFTER) > 0) {
            stop("the REST API was unreachable for " + GIVE_UP_AFTER);
        }
    }

    private void fallBack(String why) {
        if (fallbackReason == null) {
            LOG.warn("[pacer {}] falling back to Flink's periodic checkpoint interval (no paced checkpoints) because {}",
                    jobId, why);
        }
        fallbackReason = why;
    }

    private void resume() {
        if (fallbackReason != null) {
            LOG.info("[pacer {}] metrics are back; pacing resumed (was falling back because {})", jobId, fallbackReason);
            fallbackReason = null;
        }
    }

    private void stop(String why) {
        if (stopped) {
            return;
        }
        stopped = true;
        LOG.info("[pacer {}] stopped ({}); decisions {}, checkpoints triggered: age bound {}, cheapest moment {}, "
                        + "steady interval {}", jobId, why, decisions.get(), getTriggersAgeBound(),
                getTriggersCheapestMoment(), getTriggersSteadyInterval());
        executor.shutdown();
        publisher.clear();
        onStop.run();
    }

    public boolean isStopped() {
        return stopped;
    }

    @Override
    public void close() {
        stop("closed");
    }

    @Nullable
    LoadEstimator.Load lastLoad() {
        return lastLoad;
    }

    @Override
    public long getMaxRecoveryTimeMillis() {
        return settings.maxRecoveryTime().toMillis();
    }

    @Override
    public long getCheckpointAgeBoundMillis() {
        return ageBoundMillis;
    }

    @Override
    public long getEstimatedRecoveryTimeMillis() {
        return estimatedRecoveryMillis;
    }

    @Override
    public long getLastCheckpointAgeMillis() {
        return checkpointAgeMillis;
    }

    @Override
    public int getBoundUnreachable() {
        return boundUnreachable ? 1 : 0;
    }

    @Override
    public int getFallingBack() {
        return fallbackReason != null ? 1 : 0;
    }

    @Override
    public long getTriggersAgeBound() {
        return triggers.get(Reason.AGE_BOUND).get();
    }

    @Override
    public long getTriggersCheapestMoment() {
        return triggers.get(Reason.CHEAPEST_MOMENT).get();
    }

    @Override
    public long getTriggersSteadyInterval() {
        return triggers.get(Reason.STEADY_INTERVAL).get();
    }

    @Override
    public long getDecisions() {
        return decisions.get();
    }

    @Override
    public String getLastReason() {
        return lastReason;
    }

    /** Counters seen at one moment. */
    private record Sample(Instant at, JobCounters counters, boolean checkpointRunning) {}
}
