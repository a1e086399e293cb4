package io.sr3.flink.pacing;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/** The driver over a scripted {@link JobEndpoint} and a hand-moved clock; {@link CheckpointPacer#tick} is called directly. */
class CheckpointPacerTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-11-30T12:00:00Z"));
    private final TestingJobEndpoint endpoint = new TestingJobEndpoint();
    private final ScheduledExecutorService unused = Executors.newSingleThreadScheduledExecutor();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final PacingSettings settings = new PacingSettings(Duration.ofSeconds(30), Duration.ofSeconds(2),
            Duration.ofHours(1), 100L << 20, "http://127.0.0.1:1", Duration.ofSeconds(1), Duration.ofSeconds(5),
            Duration.ofMinutes(10));
    private final CheckpointPacer pacer = pacer("job", settings, endpoint, () -> stopped.set(true));

    private CheckpointPacer pacer(String job, PacingSettings pacing, JobEndpoint jobEndpoint, Runnable onStop) {
        return new CheckpointPacer(job, pacing, jobEndpoint, clock, unused, onStop, PacerStatusPublisher.NONE,
                RestoreRateSource.CONFIGURED_ONLY);
    }

    @AfterEach
    void tearDown() {
        unused.shutdownNow();
    }

    @Test
    void triggersWhenTheAgeBoundRequiresItAndCountsTheReason() {
        // 90% of capacity with hot subtasks: bound (30-2)*0.1/0.9 - 2 = 1.1 s, far below Young's interval.
        for (int second = 0; second < 4; second++) {
            endpoint.views.add(running(second, 900, 0.9));
        }
        for (int i = 0; i < 4; i++) {
            pacer.tick();
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(endpoint.triggers).isPositive();
        assertThat(pacer.status().triggers(Decision.Reason.AGE_BOUND)).isEqualTo(endpoint.triggers);
        assertThat(pacer.status().boundMillis()).isBetween(1000L, 1200L);
        assertThat(pacer.status().fallback()).isFalse();
    }

    @Test
    void fallsBackOnceWhenRestIsUnreachableAndResumesWhenMetricsReturn() {
        endpoint.views.add(running(0, 100, 0.1));
        endpoint.failures.add(new IOException("connection refused"));
        endpoint.failures.add(new IOException("connection refused"));
        pacer.tick();
        pacer.tick();
        pacer.tick();

        assertThat(pacer.status().fallback()).isTrue();
        assertThat(endpoint.triggers).isZero();

        endpoint.views.add(running(1, 100, 0.1));
        endpoint.views.add(running(2, 100, 0.1));
        pacer.tick();
        pacer.tick();

        assertThat(pacer.status().fallback()).isFalse();
        assertThat(pacer.status().decisions()).isPositive();
    }

    @Test
    void aSubtaskWithoutMetricsForLongerThanStaleAfterMeansFallback() {
        endpoint.views.add(partial());
        pacer.tick();

        assertThat(pacer.status().fallback()).as("right after a start, metrics may not be fetched yet").isFalse();

        clock.advance(settings.staleAfter().plusSeconds(1));
        endpoint.views.add(partial());
        pacer.tick();

        assertThat(pacer.status().fallback()).isTrue();
        assertThat(endpoint.triggers).isZero();
    }

    /** The source vertex has 2 subtasks but only one reports. */
    private static JobView partial() {
        return new JobView("RUNNING", false, new JobCounters(List.of(new JobCounters.Vertex("s", "source", true, 2,
                List.of(new JobCounters.Subtask(0, 1, 1, 0, 1))))), List.of(), 0, null);
    }

    @Test
    void publishesItsStatusForTheMetricsAndClearsItWhenItStops() {
        List<PacerStatus> published = new ArrayList<>();
        AtomicBoolean cleared = new AtomicBoolean();
        CheckpointPacer publishing = new CheckpointPacer("job", settings, endpoint, clock, unused, () -> {},
                new PacerStatusPublisher() {
                    @Override
                    public void publish(PacerStatus status) {
                        published.add(status);
                    }

                    @Override
                    public void clear() {
                        cleared.set(true);
                    }
                }, RestoreRateSource.CONFIGURED_ONLY);
        for (int second = 0; second < 3; second++) {
            endpoint.views.add(running(second, 900, 0.9));
            publishing.tick();
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(published).isNotEmpty();
        PacerStatus last = published.get(published.size() - 1);
        assertThat(last.boundMillis()).isEqualTo(publishing.status().boundMillis());
        assertThat(last.estimatedRecoveryMillis()).isEqualTo(publishing.status().estimatedRecoveryMillis());
        assertThat(last.lastCheckpointAtMillis()).isEqualTo(clock.instant().minusSeconds(21).toEpochMilli());
        assertThat(last.decisions()).isEqualTo(publishing.status().decisions());

        endpoint.views.add(new JobView("CANCELED", true, null, List.of(), 0, null));
        publishing.tick();
        assertThat(cleared).isTrue();
    }

    @Test
    void restartsSeenByThePacerBecomeTheObservedMtbf() {
        assertThat(pacer.status().observedMtbfMillis()).isEqualTo(-1);
        for (int restart = 0; restart < 2; restart++) {
            endpoint.views.add(running(0, 100, 0.1));
            pacer.tick();
            clock.advance(Duration.ofSeconds(30));
            endpoint.views.add(new JobView("RESTARTING", false, null, List.of(), 0, null));
            pacer.tick();
        }

        assertThat(pacer.status().observedMtbfMillis()).isEqualTo(30_000);
    }

    /**
     * After a restart the keyed subtask replays at 95% load, past the age bound of that load: the
     * pacer leaves the replay alone, and paces again once the load drops below saturation.
     */
    @Test
    void aReplayAfterARestartIsNotSlowedDownByTriggers() {
        restart();
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 4; second++) {
            job.second(900, 0.95, Duration.ofSeconds(20));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(endpoint.triggers).as("no trigger while replaying").isZero();
        assertThat(pacer.status().lastReason()).isEqualTo(Decision.Reason.CATCHING_UP);

        for (int second = 4; second < 8; second++) {
            job.second(900, 0.8, Duration.ofSeconds(20));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(pacer.status().triggers(Decision.Reason.AGE_BOUND)).as("caught up: the bound rules again").isPositive();
    }

    /**
     * 92% busy for longer than the 30 s bound after a restart: that is overload, not a replay, so
     * pacing resumes (the bound at that load is 28*78/900 - 2 = 0.4 s, so the age bound triggers).
     */
    @Test
    void aReplayIsLeftAloneForAtMostTheRecoveryTimeBound() {
        restart();
        runFor(0, 30, 900, 0.92);
        assertThat(endpoint.triggers).as("no trigger during the first 30 s").isZero();

        runFor(30, 33, 900, 0.92);
        assertThat(endpoint.triggers).as("still saturated after the bound: paced again").isPositive();
    }

    /**
     * Before the failure, 100 records/s on a capacity of 1,000/s with the state 20 s old: the model
     * expects a recovery of 2 + 100 * 22 / 900 = 4.4 s. A subtask still saturated 8.8 s after the
     * restart is busy with new input (a burst that began during the replay), not with the replay:
     * pacing resumes then, long before the 30 s bound, and the age bound of that load (0.4 s, as
     * in the test above) triggers.
     */
    @Test
    void aReplayIsLeftAloneForAtMostTwiceTheRecoveryTheModelExpected() {
        runFor(0, 4, 100, 0.1);
        assertThat(pacer.status().estimatedRecoveryMillis()).isBetween(4_300L, 4_500L);
        endpoint.views.add(new JobView("RESTARTING", false, null, List.of(), 0, null));
        pacer.tick();

        runFor(0, 8, 900, 0.92); // decisions 1..8 s after the restart
        assertThat(endpoint.triggers).as("no trigger within twice the expected recovery").isZero();

        runFor(8, 11, 900, 0.92);
        assertThat(pacer.status().triggers(Decision.Reason.AGE_BOUND)).as("still saturated after that: paced again").isPositive();
    }

    /**
     * A replay after a restart ran at 3,000 records/s without a checkpoint. Then, at 1,500/s with
     * the keyed subtask 85% busy, busy time alone says capacity 1,765/s and a bound of
     * 28*265/1500 - 2 = 2.9 s. The backlog of the checkpoint 20 s old is what the sources read
     * since the restart (12,000 replayed + 7,500 new), so with the replay's 3,000/s the recovery
     * 2 + (backlog + 1500*2)/1500 reaches 30 s at a backlog of 39,000: at 20 + 19,500/1500 = 33 s.
     * (Busy time during the replay, 3,158/s here, does not count: while tasks restore, it says
     * nothing about the job's capacity.)
     */
    @Test
    void theRateOfAReplayIsTheCapacityTheModelUses() {
        restart();
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 4; second++) {
            clock.advance(Duration.ofSeconds(1));
            job.second(3000, 0.95, Duration.ofSeconds(20));
        }
        ScriptedJob withoutReplay = otherJob();
        for (int second = 4; second < 10; second++) {
            clock.advance(Duration.ofSeconds(1));
            job.second(1500, 0.85, Duration.ofSeconds(20));
            withoutReplay.second(1500, 0.85, Duration.ofSeconds(20));
        }

        assertThat(pacer.status().boundMillis()).as("capacity from the replay").isBetween(32_500L, 33_500L);
        assertThat(withoutReplay.pacer.status().boundMillis()).as("capacity from busy time")
                .isBetween(2_500L, 3_300L);
    }

    /**
     * Seen in the pacing benchmark: right after a restart the sources fill the job's buffers
     * while the keyed subtasks still restore, here 4,000 records/s with the keyed subtask half
     * busy, which busy time reads as a capacity of 8,000/s. After the replay, at 100/s (10%
     * busy: 1,000/s), the bound is what the replay's 4,000/s allows, not 8,000/s: 2 + (B + 200)
     * / 3,900 <= 30 allows about 109,000 records of backlog (1,100 s at 100/s), 8,000/s would
     * allow 223,000.
     */
    @Test
    void busyTimeDuringAReplayIsNoCapacityMeasurement() {
        restart();
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 2; second++) {
            clock.advance(Duration.ofSeconds(1));
            job.second(4000, 0.5, Duration.ofSeconds(10));
        }
        for (int second = 2; second < 14; second++) {
            clock.advance(Duration.ofSeconds(1));
            job.second(100, 0.1, Duration.ofSeconds(10));
        }

        assertThat(pacer.status().boundMillis()).isBetween(1_000_000L, 1_200_000L);
    }

    /**
     * 900 records/s (the keyed subtask 60% busy, so no trigger) after a checkpoint that is 10 s
     * old at the restart: about 9,000 records to read again. Right after the restart the tasks
     * restore their state and look idle; that is not a caught-up job.
     */
    @Test
    void aReplayIsNotOverBeforeTheSourcesReadTheBacklogAgain() {
        ScriptedJob before = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 10; second++) {
            before.second(900, 0.6, Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(endpoint.triggers).isZero();
        endpoint.views.add(new JobView("RESTARTING", false, null, List.of(), 0, null));
        pacer.tick();

        ScriptedJob after = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 4; second++) {
            after.second(100, 0.1, Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(pacer.status().lastReason()).as("idle while restoring: not caught up")
                .isEqualTo(Decision.Reason.CATCHING_UP);

        for (int second = 0; second < 6; second++) {
            after.second(4000, 0.5, Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(pacer.status().lastReason()).as("the backlog was read again").isNotEqualTo(
                Decision.Reason.CATCHING_UP);
    }

    /**
     * The backlog the pacer estimates comes from rates Flink's metric store reports late, so it
     * can run high (seen in the pacing benchmark after a burst). Here about 9,000 records are
     * estimated, the job replays 6,000 at full load, then no subtask is saturated any more: the
     * replay is over then, not only once the sources have read 9,000 records (30 s later at
     * 100/s). And the load the next decision takes is that of the job after the replay: with the
     * replay's 3,000/s in the 4-s rate window, the bound would be about 11 s; at 100/s it is far
     * beyond 100 s.
     */
    @Test
    void aReplaySeenAtFullLoadIsOverOnceNoSubtaskIsSaturatedEvenBelowTheEstimatedBacklog() {
        ScriptedJob before = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 10; second++) {
            before.second(900, 0.6, Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(1));
        }
        endpoint.views.add(new JobView("RESTARTING", false, null, List.of(), 0, null));
        pacer.tick();

        ScriptedJob after = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 2; second++) {
            after.second(3000, 0.95, Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(1));
        }
        after.second(100, 0.1, Duration.ofSeconds(10));
        assertThat(pacer.status().lastReason()).as("replaying at full load").isEqualTo(Decision.Reason.CATCHING_UP);
        clock.advance(Duration.ofSeconds(1));
        after.second(100, 0.1, Duration.ofSeconds(10));

        assertThat(pacer.status().lastReason()).as("6,100 of about 9,000 records read, no subtask saturated: caught up")
                .isNotEqualTo(Decision.Reason.CATCHING_UP);
        assertThat(pacer.lastLoad().inputRate()).as("the input after the replay").isEqualTo(100);
        assertThat(pacer.status().boundMillis()).isGreaterThan(100_000L);
    }

    /**
     * The pacer asked for a checkpoint and the job failed over before it showed up: the failover
     * aborted it, so the pacer does not wait for it (seen in the pacing benchmark: 13 s without a
     * trigger, and a recovery far over the bound).
     */
    @Test
    void aRestartForgetsTheCheckpointItAbortedInsteadOfWaitingForIt() {
        triggerAndWaitForTheCheckpoint();

        endpoint.views.add(new JobView("RESTARTING", false, null, List.of(), 0, null));
        pacer.tick();
        runFor(0, 3, 900, 0.95);

        assertThat(pacer.status().lastReason()).as("the aborted request is not in progress any more")
                .isEqualTo(Decision.Reason.CATCHING_UP);
    }

    /**
     * The pacer asked for a checkpoint, and Flink answered the request with a failure (the job
     * was failing as it came), with no restart in the polls: no checkpoint of it will show up, so
     * the pacer does not wait its patience for one (seen in the pacing benchmark: 13 s without a
     * trigger, the state 19.5 s old at the next failure).
     */
    @Test
    void aTriggerRequestAnsweredWithAFailureIsNotWaitedFor() {
        int triggers = triggerAndWaitForTheCheckpoint();

        clock.advance(Duration.ofSeconds(1));
        JobView answered = running(5, 900, 0.9);
        endpoint.views.add(new JobView(answered.state(), false, answered.counters(), answered.completedCheckpoints(), 0,
                clock.instant()));
        pacer.tick();
        assertThat(pacer.status().lastReason()).as("the failed request is not in progress").isNotEqualTo(
                Decision.Reason.CHECKPOINT_IN_PROGRESS);
        assertThat(endpoint.triggers).as("the bound still needs a checkpoint").isGreaterThan(triggers);
    }

    /**
     * After a restart, Flink's metric store may still hold the old attempt's counters for a poll;
     * the new attempt's counters then look like a second restart, whose replay would have to read
     * the old attempt's records again. The pacer sees one restart and decides exactly as for a
     * restart without the stale poll.
     */
    @Test
    void staleCountersOfTheOldAttemptAreNotASecondRestart() {
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        ScriptedJob clean = otherJob();
        for (int second = 0; second < 10; second++) {
            job.second(100, 0.2, Duration.ofSeconds(5));
            clean.second(100, 0.2, Duration.ofSeconds(5));
            clock.advance(Duration.ofSeconds(1));
        }
        JobView oldAttempt = endpoint.lastPolled;
        JobView restarting = new JobView("RESTARTING", false, null, List.of(), 0, null);
        endpoint.views.add(restarting);
        pacer.tick();
        clean.endpoint.views.add(restarting);
        clean.pacer.tick();
        clock.advance(Duration.ofSeconds(1));
        endpoint.views.add(oldAttempt);
        pacer.tick();
        clock.advance(Duration.ofSeconds(1));

        ScriptedJob newAttempt = new ScriptedJob(endpoint, pacer);
        ScriptedJob cleanNewAttempt = new ScriptedJob(clean.endpoint, clean.pacer);
        for (int second = 0; second < 6; second++) {
            newAttempt.second(300, 0.5, Duration.ofSeconds(5));
            cleanNewAttempt.second(300, 0.5, Duration.ofSeconds(5));
            clock.advance(Duration.ofSeconds(1));
            assertThat(pacer.status().lastReason()).as("second %d of the new attempt", second)
                    .isEqualTo(clean.pacer.status().lastReason());
        }

        assertThat(pacer.status().boundMillis()).isPositive()
                .isEqualTo(clean.pacer.status().boundMillis());
        assertThat(pacer.status().estimatedRecoveryMillis()).isEqualTo(clean.pacer.status().estimatedRecoveryMillis());
    }

    /**
     * A metric glitch: the source's record count goes back while every subtask kept running.
     * Taken for a restart, it would hold checkpoints back while the "replay" reads the 18,000
     * records since the checkpoint 60 s ago; it is only a fresh start of the rate window.
     */
    @Test
    void countersThatGoBackWithoutANewAttemptAreNoRestart() {
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 5; second++) {
            job.second(300, 0.2, Duration.ofSeconds(60));
            clock.advance(Duration.ofSeconds(1));
        }
        JobView last = endpoint.lastPolled;
        List<JobCounters.Vertex> glitched = new ArrayList<>();
        for (JobCounters.Vertex v : last.counters().vertices()) {
            List<JobCounters.Subtask> subtasks = new ArrayList<>();
            for (JobCounters.Subtask t : v.subtasks()) {
                subtasks.add(new JobCounters.Subtask(t.index(), v.source() ? t.recordsOut() - 100 : t.recordsOut(),
                        t.busyMs(), t.backPressuredMs(), t.idleMs() + 500));
            }
            glitched.add(new JobCounters.Vertex(v.id(), v.name(), v.source(), v.parallelism(), subtasks));
        }
        endpoint.views.add(new JobView("RUNNING", false, new JobCounters(glitched), last.completedCheckpoints(), 0,
                null));
        pacer.tick();
        for (int second = 5; second < 10; second++) {
            job.second(300, 0.2, Duration.ofSeconds(60));
            clock.advance(Duration.ofSeconds(1));
            assertThat(pacer.status().lastReason()).isNotEqualTo(Decision.Reason.CATCHING_UP);
        }
        assertThat(pacer.status().observedMtbfMillis()).as("no restart counted").isEqualTo(-1);
    }

    /**
     * After a restart, counters that ran longer than the time since the restart are the old
     * attempt's and are skipped; but only for the bound plus stale-after (35 s here), so that a
     * check that misfires cannot leave the pacer without samples.
     */
    @Test
    void countersOlderThanTheRestartAreSkippedForABoundedTimeOnly() {
        restart();
        long before = pacer.status().decisions();
        for (int second = 1; second <= 34; second++) {
            clock.advance(Duration.ofSeconds(1));
            endpoint.views.add(running(100 + second, 300, 0.2));
            pacer.tick();
        }
        assertThat(pacer.status().decisions()).as("the old attempt's counters").isEqualTo(before);

        for (int second = 35; second <= 40; second++) {
            clock.advance(Duration.ofSeconds(1));
            endpoint.views.add(running(100 + second, 300, 0.2));
            pacer.tick();
        }
        assertThat(pacer.status().decisions()).as("taken as samples after 35 s").isGreaterThan(before);
    }

    /**
     * Flink counts the job's restarts ({@code numRestarts}); the pacer takes each restart from the
     * count, also when no poll shows counters going back: here the first poll after each failure
     * has the keyed subtask's metrics missing (the metric store fills in a new attempt subtask by
     * subtask), and the next shows only the new attempt's counters.
     */
    @Test
    void aRestartFlinkCountedIsSeenWhenNoPollShowsCountersGoingBack() {
        for (int restarts = 0; restarts < 2; restarts++) {
            runAttempt(30, restarts);
            endpoint.views.add(counted(withoutKeyedMetrics(running(30, 100, 0.1)), restarts + 1));
            pacer.tick();
            clock.advance(Duration.ofSeconds(1));
        }

        // Restarts after the last fresh counters of attempts that started at 0 s and 31 s.
        assertThat(pacer.status().observedMtbfMillis()).as("two restarts").isEqualTo(30_000);
    }

    /**
     * While Flink counts restarts, counters going back are the metric store's doing (a new
     * attempt filled in subtask by subtask, a late report of the old one), not a restart: with
     * the count unchanged, twice-reset counters leave the pacer pacing. Counting starts at the
     * first count seen: the job's 3 restarts before the pacer came are not its own.
     */
    @Test
    void whileFlinkCountsRestartsCountersGoingBackAreNone() {
        for (int attempt = 0; attempt < 3; attempt++) {
            runAttempt(10, 3);
        }

        assertThat(pacer.status().observedMtbfMillis()).as("no restart counted").isEqualTo(-1);
        assertThat(pacer.status().lastReason()).isNotEqualTo(Decision.Reason.CATCHING_UP);
    }

    /** One poll per second of an attempt whose counters start at 0, with Flink's restart count at {@code restarts}. */
    private void runAttempt(int seconds, long restarts) {
        for (int second = 0; second < seconds; second++) {
            endpoint.views.add(counted(running(second, 100, 0.1), restarts));
            pacer.tick();
            clock.advance(Duration.ofSeconds(1));
        }
    }

    private static JobView counted(JobView view, long restarts) {
        return new JobView(view.state(), view.terminal(), view.counters(), view.completedCheckpoints(),
                view.checkpointsInProgress(), view.latestFailedTrigger(), restarts);
    }

    /** {@code view} without the keyed subtask's metrics. */
    private static JobView withoutKeyedMetrics(JobView view) {
        List<JobCounters.Vertex> vertices = new ArrayList<>();
        for (JobCounters.Vertex v : view.counters().vertices()) {
            vertices.add(v.source() ? v : new JobCounters.Vertex(v.id(), v.name(), false, v.parallelism(), List.of()));
        }
        return new JobView(view.state(), false, new JobCounters(vertices), view.completedCheckpoints(),
                view.checkpointsInProgress(), view.latestFailedTrigger());
    }

    /** The job ran, then the pacer sees it RESTARTING. */
    private void restart() {
        endpoint.views.add(running(0, 100, 0.1));
        pacer.tick();
        endpoint.views.add(new JobView("RESTARTING", false, null, List.of(), 0, null));
        pacer.tick();
    }

    /** One decision per second from {@code from} to {@code to} (exclusive) at {@code rate} and {@code busy}. */
    private void runFor(int from, int to, long rate, double busy) {
        for (int second = from; second < to; second++) {
            clock.advance(Duration.ofSeconds(1));
            endpoint.views.add(running(second, rate, busy));
            pacer.tick();
        }
    }

    @Test
    void measuredRestoreRatesReplaceTheConfiguredBandwidth() {
        // 1000 bytes of state: instant at the configured 100 MiB/s, 100 s at a measured 10 B/s.
        CheckpointPacer measured = new CheckpointPacer("job", settings, endpoint, clock, unused, () -> {},
                PacerStatusPublisher.NONE, () -> java.util.OptionalDouble.of(10));
        for (int second = 0; second < 3; second++) {
            endpoint.views.add(running(second, 100, 0.1));
            measured.tick();
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(measured.status().restoreBytesPerSecond()).isEqualTo(10);
        assertThat(measured.status().estimatedRecoveryMillis()).isGreaterThan(100_000);
    }

    /**
     * Bound 30 s, detection 2 s, checkpoints of 0.1 s, MTBF 1 h: Young's interval is 26.8 s. A burst
     * at 500/s with the keyed subtask 60% busy, then quiet at 100/s and 10% busy with the last
     * checkpoint 14 s old: on its own the quiet load waits for Young's interval, but the burst
     * would allow only (28)*1 - 2 - 0.1 - 1 = 24.9 s, so a pacer that saw it uses the quiet moment.
     */
    @Test
    void aBurstItSawMakesItCheckpointInTheQuietPhaseAfterIt() {
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 4; second++) {
            job.second(500, 0.6, Duration.ofSeconds(2));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(endpoint.triggers).as("the burst itself needs no checkpoint yet").isZero();

        ScriptedJob quietOnly = otherJob();
        for (int second = 4; second < 12; second++) {
            job.second(100, 0.1, Duration.ofSeconds(14));
            quietOnly.second(100, 0.1, Duration.ofSeconds(14));
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(pacer.status().triggers(Decision.Reason.CHEAPEST_MOMENT)).as("quiet moments used ahead of the next peak").isPositive();
        assertThat(endpoint.triggers).isEqualTo(pacer.status().triggers(Decision.Reason.CHEAPEST_MOMENT));
        assertThat(quietOnly.endpoint.triggers).as("a pacer that never saw the burst waits for Young's interval")
                .isZero();
    }

    /**
     * 500 records/s; the keyed subtask is 25% busy without a checkpoint (capacity 2,000/s) and 60%
     * busy while one runs (833/s). The bound (30-2)*(mu-500)/500 - 2 is 82 s with the first and
     * 16.7 s with the second: the pacer keeps the capacity measured without a checkpoint, because a
     * replay runs without one.
     */
    @Test
    void capacityMeasuredWhileACheckpointRunsDoesNotShrinkTheBound() {
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 4; second++) {
            job.second(500, 0.25, Duration.ofSeconds(10), 0, 0);
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(pacer.status().boundMillis()).as("without a checkpoint").isBetween(81_000L, 83_000L);

        ScriptedJob onlyDuringCheckpoints = otherJob();
        for (int second = 4; second < 8; second++) {
            job.second(500, 0.6, Duration.ofSeconds(1), 0, 1);
            onlyDuringCheckpoints.second(500, 0.6, Duration.ofSeconds(1), 0, 1);
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(pacer.status().boundMillis()).as("a checkpoint runs now").isBetween(81_000L, 83_000L);
        assertThat(onlyDuringCheckpoints.pacer.status().boundMillis()).as("never measured without one")
                .isBetween(16_000L, 17_500L);
    }

    /**
     * 1,500 records/s with the keyed subtask 60% busy (capacity 2,500/s), then 100/s at 10% busy,
     * which says 1,000/s: at low load, per-record overhead inflates busy time. The quiet phase's
     * bound uses the capacity measured under load: 2 + (backlog + 200) / 2,400 <= 30 allows about
     * 67,000 records of backlog, against 25,000 with 1,000/s (the checkpoint is 10 s old, so every
     * rate window is free of it).
     */
    @Test
    void capacityMeasuredUnderLoadOutlastsTheLowLoadEstimate() {
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 6; second++) {
            job.second(1500, 0.6, Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(1));
        }
        ScriptedJob quietOnly = otherJob();
        for (int second = 6; second < 14; second++) {
            job.second(100, 0.1, Duration.ofSeconds(10));
            quietOnly.second(100, 0.1, Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(1));
        }

        long underLoad = pacer.status().boundMillis();
        long lowLoadOnly = quietOnly.pacer.status().boundMillis();
        assertThat(lowLoadOnly).as("1,000/s").isBetween(200_000L, 260_000L);
        assertThat(underLoad).as("2,500/s").isBetween(600_000L, 680_000L);
    }

    /**
     * 400 MiB of state at the configured 100 MiB/s: 4 s to restore if one subtask holds it all,
     * 1 s when four subtasks restore a quarter each in parallel. At 100 records/s and capacity
     * 1,000/s the estimated recovery differs by 3 s * (1 + 100/900).
     */
    @Test
    void theRestoreTakesAsLongAsTheLargestShareOneSubtaskRestores() {
        TestingJobEndpoint shared = new TestingJobEndpoint();
        CheckpointPacer sharedPacer = pacer("shared", settings, shared, () -> {});
        for (int second = 0; second < 4; second++) {
            JobCounters counters = running(second, 100, 0.1).counters();
            Instant triggered = clock.instant().minusSeconds(5);
            endpoint.views.add(new JobView("RUNNING", false, counters, List.of(new CheckpointSample(1, triggered,
                    Duration.ofMillis(100), 400L << 20)), 0, null));
            shared.views.add(new JobView("RUNNING", false, counters, List.of(new CheckpointSample(1, triggered,
                    Duration.ofMillis(100), 400L << 20, 100L << 20)), 0, null));
            pacer.tick();
            sharedPacer.tick();
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(pacer.status().estimatedRecoveryMillis() - sharedPacer.status().estimatedRecoveryMillis())
                .isBetween(3_200L, 3_450L);
    }

    /** The same burst, but the source was back-pressured half the time: a catch-up, not the input's peak. */
    @Test
    void aCatchUpIsNotRememberedAsAPeak() {
        ScriptedJob job = new ScriptedJob(endpoint, pacer);
        for (int second = 0; second < 4; second++) {
            job.second(500, 0.6, Duration.ofSeconds(2), 0.5, 0);
            clock.advance(Duration.ofSeconds(1));
        }
        for (int second = 4; second < 12; second++) {
            job.second(100, 0.1, Duration.ofSeconds(14), 0.5, 0);
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(endpoint.triggers).as("no peak remembered, so Young's interval rules").isZero();
    }


    /**
     * A failure late in a quiet phase: once the replay is over, the state is as old as at the
     * failure plus the recovery, past Young's interval (26.8 s). The pacer checkpoints at the
     * sample that shows the job caught up, at the quiet rate, not a rate window (4 s here) later:
     * by then the next burst may have begun, and the age bound forces the checkpoint into it.
     */
    @Test
    void afterAReplayTheInputAtItsQuietRateIsNoLongerSettling() {
        ScriptedJob replay = restartedAfterABurst();
        // Each decision sees the seconds before it: the third, two seconds of replay.
        for (int second = 0; second < 3; second++) {
            replay.second(second < 2 ? 3000 : 100, second < 2 ? 0.95 : 0.1, Duration.ofSeconds(28));
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(replay.endpoint.triggers).as("no trigger during the replay").isZero();
        assertThat(replay.pacer.status().lastReason()).isEqualTo(Decision.Reason.CATCHING_UP);

        replay.second(100, 0.1, Duration.ofSeconds(28));
        assertThat(replay.pacer.status().triggers(Decision.Reason.STEADY_INTERVAL)).as("at the first quiet second after the replay")
                .isEqualTo(1);
    }


    /**
     * A job that learned a burst (10 s at 100/s, 8 s at 400/s, 12 s at
     * 100/s, its checkpoint 5 s old) and then restarted: the script of its new attempt.
     */
    private ScriptedJob restartedAfterABurst() {
        ScriptedJob job = otherJob();
        int[][] phases = {{10, 100}, {8, 400}, {12, 100}};
        for (int[] phase : phases) {
            for (int second = 0; second < phase[0]; second++) {
                job.second(phase[1], phase[1] / 1000.0, Duration.ofSeconds(5));
                clock.advance(Duration.ofSeconds(1));
            }
        }
        job.endpoint.views.add(new JobView("RESTARTING", false, null, List.of(), 0, null));
        job.pacer.tick();
        return new ScriptedJob(job.endpoint, job.pacer);
    }

    /** A second pacer on the same clock and settings, fed by its own script. */
    private ScriptedJob otherJob() {
        return otherJob(settings);
    }

    private ScriptedJob otherJob(PacingSettings otherSettings) {
        TestingJobEndpoint other = new TestingJobEndpoint();
        return new ScriptedJob(other, pacer("other", otherSettings, other, () -> {}));
    }

    /**
     * A running job as the pacer reads it over REST: a source and a keyed subtask whose cumulative
     * counters grow one second per {@link #second} call, after which the pacer decides once.
     */
    private final class ScriptedJob {
        final TestingJobEndpoint endpoint;
        final CheckpointPacer pacer;
        private long records;
        private double busyMs;
        private long elapsedMs;

        ScriptedJob(TestingJobEndpoint endpoint, CheckpointPacer pacer) {
            this.endpoint = endpoint;
            this.pacer = pacer;
        }

        void second(long rate, double busy, Duration lastCheckpointAge) {
            second(rate, busy, lastCheckpointAge, 0, 0);
        }

        /**
         * Shows the counters so far, lets the pacer decide, then adds one second in which the
         * source emitted {@code rate} records and was back-pressured a fraction
         * {@code sourceBackPressure}, and the keyed subtask was busy a fraction {@code busy};
         * {@code inProgress} checkpoints are running.
         */
        void second(long rate, double busy, Duration lastCheckpointAge, double sourceBackPressure, int inProgress) {
            JobCounters counters = new JobCounters(List.of(
                    new JobCounters.Vertex("s", "source", true, 1, List.of(new JobCounters.Subtask(0, records,
                            0.1 * elapsedMs, sourceBackPressure * elapsedMs, (0.9 - sourceBackPressure) * elapsedMs))),
                    new JobCounters.Vertex("k", "keyed", false, 1, List.of(new JobCounters.Subtask(0, 0, busyMs, 0,
                            elapsedMs - busyMs)))));
            List<CheckpointSample> done = List.of(new CheckpointSample(1, clock.instant().minus(lastCheckpointAge),
                    Duration.ofMillis(100), 1000));
            endpoint.views.add(new JobView("RUNNING", false, counters, done, inProgress, null));
            pacer.tick();
            records += rate;
            busyMs += busy * 1000;
            elapsedMs += 1000;
        }
    }

    @Test
    void stopsWhenTheJobIsTerminal() {
        endpoint.views.add(new JobView("FINISHED", true, null, List.of(), 0, null));
        pacer.tick();

        assertThat(stopped).isTrue();
        assertThat(pacer.isStopped()).isTrue();
    }

    /** A running job whose source emitted {@code rate} records/s for {@code second} seconds, keyed subtask at {@code busy}. */
    /** Four busy seconds make the pacer trigger; the next poll shows no checkpoint yet. Returns the triggers. */
    private int triggerAndWaitForTheCheckpoint() {
        for (int second = 0; second < 4; second++) {
            endpoint.views.add(running(second, 900, 0.9));
            pacer.tick();
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(endpoint.triggers).isPositive();
        endpoint.views.add(running(4, 900, 0.9));
        pacer.tick();
        assertThat(pacer.status().lastReason()).isEqualTo(Decision.Reason.CHECKPOINT_IN_PROGRESS);
        return endpoint.triggers;
    }

    private JobView running(int second, long rate, double busy) {
        long ms = second * 1000L;
        JobCounters counters = new JobCounters(List.of(
                new JobCounters.Vertex("s", "source", true, 1, List.of(new JobCounters.Subtask(0, rate * second,
                        0.1 * ms, 0, 0.9 * ms))),
                new JobCounters.Vertex("k", "keyed", false, 1, List.of(new JobCounters.Subtask(0, 0, busy * ms, 0,
                        (1 - busy) * ms)))));
        List<CheckpointSample> done = List.of(new CheckpointSample(1, clock.instant().minusSeconds(20), Duration.ofMillis(100), 1000));
        return new JobView("RUNNING", false, counters, done, 0, null);
    }

    private static final class TestingJobEndpoint implements JobEndpoint {
        final Deque<JobView> views = new ArrayDeque<>();
        final List<IOException> failures = new ArrayList<>();
        int triggers;
        JobView lastPolled;

        @Override
        public JobView poll() throws IOException {
            if (!failures.isEmpty()) {
                throw failures.remove(0);
            }
            JobView view = views.poll();
            if (view == null) {
                throw new IOException("script exhausted");
            }
            lastPolled = view;
            return view;
        }

        @Override
        public void triggerCheckpoint() {
            triggers++;
        }

        @Override
        public String describe() {
            return "testing endpoint";
        }
    }

    private static final class MutableClock extends Clock {
        private Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneId.of("UTC");
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
