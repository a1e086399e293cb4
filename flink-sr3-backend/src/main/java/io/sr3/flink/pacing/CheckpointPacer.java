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
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Drives {@link PacingPolicy} for one job: every decision period it polls the job
 * ({@link JobEndpoint}), observes its load ({@link JobObservation}), decides, triggers a checkpoint
 * when told to and publishes its {@link PacerStatus}. Flink's periodic checkpoints keep running
 * underneath as the safety maximum; the pacer only adds checkpoints. While the endpoint is
 * unreachable or metrics are missing or stale it triggers nothing and says so once. It stops when
 * the job is terminal or gone, or the endpoint away for {@link #GIVE_UP_AFTER}.
 *
 * <p>Thread model: {@link #tick} runs on the single thread of the given executor; {@link #status}
 * may be read from any thread.
 */
@ThreadSafe
public final class CheckpointPacer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointPacer.class);

    /** An endpoint that stays away this long belongs to a cluster that is gone. */
    static final Duration GIVE_UP_AFTER = Duration.ofMinutes(2);
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
    private final JobObservation observation;

    // Confined to the executor thread.
    @Nullable private Instant lastRequest, unreachableSince;
    @Nullable private String fallbackReason;
    @Nullable private Decision lastDecision;
    private final Map<Reason, Long> triggers = new EnumMap<>(Reason.class);
    private long decisions, restartsSeen, lastCheckpointAtMillis = -1, restoreBytesPerSecond = -1, stuckWarnedFor = -1;
    private boolean seenJob, lastReachable = true;

    private volatile PacerStatus status = PacerStatus.initial();
    private volatile boolean stopped;

    public CheckpointPacer(String jobId, PacingSettings settings, JobEndpoint endpoint, Clock clock,
            ScheduledExecutorService executor, Runnable onStop, PacerStatusPublisher publisher,
            RestoreRateSource restoreRates) {
        this.jobId = jobId;
        this.settings = settings;
        this.policy = new PacingPolicy(settings, clock);
        this.endpoint = endpoint;
        this.clock = clock;
        this.executor = executor;
        this.onStop = onStop;
        this.publisher = publisher;
        this.restoreRates = restoreRates;
        this.observation = new JobObservation(jobId, settings, clock);
    }

    public void start() {
        long period = settings.decisionPeriod().toMillis();
        LOG.info("[pacer {}] started: {}, deciding every {} ms from {}; Flink's periodic checkpoints stay on as the "
                + "safety maximum", jobId, settings, period, endpoint.describe());
        executor.scheduleWithFixedDelay(this::tickSafely, period, period, TimeUnit.MILLISECONDS);
    }

    private void tickSafely() {
        try {
            tick();
        } catch (RuntimeException e) {
            fallBack("unexpected error: " + e);
            status = snapshot(clock.instant());
            LOG.debug("[pacer {}] error in a decision round", jobId, e);
        }
    }

    /** One round: poll, observe, decide, maybe trigger, publish. */
    void tick() {
        if (stopped) {
            return;
        }
        Instant now = clock.instant();
        try {
            round(now);
        } finally {
            status = snapshot(now);
        }
    }

    private void round(Instant now) {
        JobView view;
        try {
            view = endpoint.poll();
            unreachableSince = null;
            seenJob = true;
        } catch (IOException e) {
            if (e instanceof JobEndpoint.UnknownJobException && seenJob) {
                stop("the REST API no longer knows the job");
            } else {
                unreachable(now, e);
            }
            return;
        }
        if (view.terminal()) {
            stop("job " + view.state());
            return;
        }
        JobObservation.Outcome outcome = observation.observe(view);
        if (observation.restarts() != restartsSeen) {
            // A failover aborts the running checkpoint, ours included: waiting for it would hold every trigger back.
            restartsSeen = observation.restarts();
            lastRequest = null;
        }
        if (outcome instanceof JobObservation.Stale stale) {
            fallBack(stale.why());
        } else if (outcome instanceof JobObservation.Fresh fresh) {
            if (fallbackReason != null) {
                LOG.info("[pacer {}] metrics are back; pacing resumed (was falling back because {})", jobId,
                        fallbackReason);
                fallbackReason = null;
            }
            decide(now, view, fresh.load());
        }
    }

    private void decide(Instant now, JobView view, LoadEstimator.Load load) {
        List<CheckpointSample> completed = view.completedCheckpoints();
        List<CheckpointSample> recent = completed.subList(Math.max(0, completed.size() - HISTORY), completed.size());
        CheckpointSample last = recent.isEmpty() ? null : recent.get(recent.size() - 1);
        Duration restore = RecoveryModel.restoreTime(last == null ? 0 : last.largestShareBytes(), restoreBandwidth());
        boolean pending = view.checkpointsInProgress() > 0 || requestPending(now, last, view.latestFailedTrigger());
        Decision decision = policy.decide(observation.inputs(load, recent, pending, restore));
        observation.decided(decision);
        decisions++;
        lastDecision = decision;
        lastCheckpointAtMillis = last == null ? -1 : last.triggered().toEpochMilli();
        warnIfStuck(view, decision, last);
        if (decision.boundReachable() != lastReachable) {
            lastReachable = decision.boundReachable();
            if (lastReachable) {
                LOG.info("[pacer {}] the bound {} is reachable again: {}", jobId, settings.maxRecoveryTime(),
                        decision.explanation());
            } else {
                LOG.warn("[pacer {}] the bound {} cannot be met, not even with checkpoints back to back: {}", jobId,
                        settings.maxRecoveryTime(), decision.explanation());
            }
        }
        publisher.publish(snapshot(now));
        if (!decision.checkpointNow()) {
            LOG.debug("[pacer {}] wait ({}): {}", jobId, decision.reason(), decision.explanation());
            return;
        }
        try {
            endpoint.triggerCheckpoint();
            lastRequest = now;
            triggers.merge(decision.reason(), 1L, Long::sum);
            LOG.info("[pacer {}] checkpoint triggered ({}): {}", jobId, decision.reason(), decision.explanation());
        } catch (IOException e) {
            LOG.warn("[pacer {}] could not trigger a checkpoint ({}): {}; Flink's periodic checkpoints continue", jobId,
                    decision.reason(), e.getMessage());
        }
    }

    private PacerStatus snapshot(Instant now) {
        Decision d = lastDecision;
        Duration mtbf = observation.observedMtbf();
        return new PacerStatus(d == null || d.ageBound() == null ? -1 : d.ageBound().toMillis(),
                d == null || d.estimatedRecovery() == null ? -1 : d.estimatedRecovery().toMillis(),
                d == null ? -1 : d.checkpointAge().toMillis(), lastCheckpointAtMillis, d == null || d.boundReachable(),
                fallbackReason != null, decisions, triggers, d == null ? null : d.reason(), restoreBytesPerSecond,
                mtbf == null ? -1 : mtbf.toMillis(), now.toEpochMilli());
    }

    /** The restore rate the TaskManagers measured recently, else the configured one. */
    private long restoreBandwidth() {
        OptionalDouble measured = restoreRates.bytesPerSecond();
        restoreBytesPerSecond = measured.isPresent() ? Math.max(1, Math.round(measured.getAsDouble()))
                : settings.restoreBytesPerSecond();
        return restoreBytesPerSecond;
    }

    /** A checkpoint running past the allowed age breaks the bound and no trigger helps: say so once, with the way out. */
    private void warnIfStuck(JobView view, Decision decision, @Nullable CheckpointSample last) {
        long marker = last == null ? 0 : last.triggered().toEpochMilli();
        if (view.checkpointsInProgress() > 0 && decision.ageBound() != null && marker != stuckWarnedFor
                && decision.checkpointAge().compareTo(decision.ageBound()) > 0) {
            stuckWarnedFor = marker;
            LOG.warn("[pacer {}] a checkpoint is still in progress while the state is {} ms old, past the allowed {} ms: "
                    + "the bound does not hold until it completes. Under back-pressure, unaligned checkpoints "
                    + "(execution.checkpointing.unaligned.enabled: true) let barriers overtake buffered records.", jobId,
                    decision.checkpointAge().toMillis(), decision.ageBound().toMillis());
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
        unreachableSince = unreachableSince == null ? now : unreachableSince;
        observation.forgetSamples();
        fallBack("REST API " + endpoint.describe() + " failed: " + (e.getMessage() != null ? e.getMessage() : e));
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

    private void stop(String why) {
        if (stopped) {
            return;
        }
        stopped = true;
        LOG.info("[pacer {}] stopped ({}); decisions {}, checkpoints triggered: {}", jobId, why, decisions, triggers);
        executor.shutdown();
        publisher.clear();
        onStop.run();
    }

    /** What the pacer last saw and decided; safe from any thread. */
    public PacerStatus status() {
        return status;
    }

    public PacingSettings settings() {
        return settings;
    }

    public boolean isStopped() {
        return stopped;
    }

    @Override
    public void close() {
        stop("closed");
    }

    @Nullable // for tests
    LoadEstimator.Load lastLoad() {
        return observation.lastLoad();
    }
}
