package io.sr3.flink.pacing;

import io.sr3.flink.pacing.Decision.Reason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

/**
 * The pacing rules, one row per situation. Every row: bound 60 s, failure detection 5 s, MTBF 1 h,
 * a decision every second; the last completed checkpoint was triggered {@code age} seconds ago
 * and took {@code cost} seconds.
 */
class PacingPolicyTest {

    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final PacingPolicy POLICY = new PacingPolicy(settings(Duration.ofSeconds(60), Duration.ofSeconds(5)),
            Clock.fixed(NOW, ZoneOffset.UTC));

    /** Checkpoint now or not, as a row expects it. */
    enum Action {
        CHECKPOINT,
        WAIT
    }

    /**
     * @param lambda input rate, records/s
     * @param mu capacity, records/s
     * @param hottest load of the busiest subtask
     * @param cost duration of the last checkpoint, s
     * @param age seconds since the last checkpoint was triggered
     * @param restore restore-time estimate, s
     */
    record Row(String situation, double lambda, double mu, double hottest, double cost, double age, double restore,
            boolean inProgress, Action action, Reason reason, boolean reachable) {

        @Override
        public String toString() {
            return situation;
        }
    }

    static Stream<Row> rows() {
        return Stream.of(
                // Steady load, 10% of capacity: bound 480 s is loose, Young's interval sqrt(2*0.5*3600) = 60 s rules.
                new Row("steady: before Young's interval", 1000, 10000, 0.10, 0.5, 30, 1, false,
                        Action.WAIT, Reason.WITHIN_BOUND, true),
                new Row("steady: Young's interval reached", 1000, 10000, 0.10, 0.5, 61, 1, false,
                        Action.CHECKPOINT, Reason.STEADY_INTERVAL, true),
                new Row("steady: Young's interval reached at a load peak", 1000, 10000, 0.90, 0.5, 61, 1, false,
                        Action.WAIT, Reason.WAITING_FOR_HEADROOM, true),
                new Row("steady: a load peak still yields to the bound", 1000, 10000, 0.90, 0.5, 479, 1, false,
                        Action.CHECKPOINT, Reason.AGE_BOUND, true),
                // Burst to 80% of capacity: bound (60-6)*2000/8000 - 6 = 7.5 s; deadline 7.5 - 0.5 - 1 = 6 s; window from 3 s.
                new Row("burst toward capacity: window not open yet", 8000, 10000, 0.30, 0.5, 2, 1, false,
                        Action.WAIT, Reason.WITHIN_BOUND, true),
                new Row("burst toward capacity: in the window, hot subtasks busy", 8000, 10000, 0.85, 0.5, 4, 1, false,
                        Action.WAIT, Reason.WAITING_FOR_HEADROOM, true),
                new Row("burst toward capacity: in the window, headroom", 8000, 10000, 0.30, 0.5, 4, 1, false,
                        Action.CHECKPOINT, Reason.CHEAPEST_MOMENT, true),
                new Row("burst toward capacity: deadline, hot or not", 8000, 10000, 0.85, 0.5, 6.5, 1, false,
                        Action.CHECKPOINT, Reason.AGE_BOUND, true),
                // Burst above capacity: the backlog grows, no checkpoint schedule can bound the recovery.
                new Row("burst over capacity: no thrashing", 12000, 10000, 1.00, 0.5, 10, 1, false,
                        Action.WAIT, Reason.BOUND_UNREACHABLE, false),
                new Row("burst over capacity: Young's interval with headroom", 12000, 10000, 0.40, 0.5, 70, 1, false,
                        Action.CHECKPOINT, Reason.STEADY_INTERVAL, false),
                new Row("burst over capacity: Young's interval while saturated", 12000, 10000, 1.00, 0.5, 70, 1, false,
                        Action.CHECKPOINT, Reason.STEADY_INTERVAL, false),
                // Growing state at half capacity: bound (60-5-R)*1 - 5 - R.
                new Row("growing state: small (R 1 s, bound 48 s)", 5000, 10000, 0.90, 0.5, 30, 1, false,
                        Action.WAIT, Reason.WAITING_FOR_HEADROOM, true),
                new Row("growing state: larger (R 20 s, bound 10 s)", 5000, 10000, 0.90, 0.5, 30, 20, false,
                        Action.CHECKPOINT, Reason.AGE_BOUND, true),
                new Row("growing state: too large (R 40 s)", 5000, 10000, 0.90, 0.5, 30, 40, false,
                        Action.WAIT, Reason.BOUND_UNREACHABLE, false),
                // Slow checkpoints at half capacity (bound 48 s): the deadline moves earlier by the duration.
                new Row("slow checkpoint: 0.5 s, deadline 46.5 s", 5000, 10000, 0.90, 0.5, 40, 1, false,
                        Action.WAIT, Reason.WAITING_FOR_HEADROOM, true),
                new Row("slow checkpoint: 10 s, deadline 37 s", 5000, 10000, 0.90, 10, 40, 1, false,
                        Action.CHECKPOINT, Reason.AGE_BOUND, true),
                new Row("slow checkpoint: 20 s, back to back still within the bound", 5000, 10000, 0.90, 20, 40, 1,
                        false, Action.CHECKPOINT, Reason.AGE_BOUND, true),
                new Row("slow checkpoint: 30 s, back to back 60 s old, past the bound: no thrashing", 5000, 10000,
                        0.90, 30, 40, 1, false, Action.WAIT, Reason.BOUND_UNREACHABLE, false),
                new Row("slow checkpoint: 50 s, longer than the bound", 5000, 10000, 0.90, 50, 40, 1, false,
                        Action.WAIT, Reason.BOUND_UNREACHABLE, false),
                // Detection + restore alone exceed the bound, even without input.
                new Row("unreachable bound: D + R > bound", 0, 10000, 0.10, 0.5, 1, 58, false,
                        Action.WAIT, Reason.BOUND_UNREACHABLE, false),
                new Row("running checkpoint: wait even past the deadline", 8000, 10000, 0.30, 0.5, 30, 1, true,
                        Action.WAIT, Reason.CHECKPOINT_IN_PROGRESS, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void decides(Row row) {
        Decision decision = POLICY.decide(inputs(row));

        assertThat(action(decision)).as(decision.explanation()).isEqualTo(row.action());
        assertThat(decision.reason()).as(decision.explanation()).isEqualTo(row.reason());
        assertThat(decision.boundReachable()).as(decision.explanation()).isEqualTo(row.reachable());
        assertThat(decision.checkpointAge()).isEqualTo(Duration.ofMillis(Math.round(row.age() * 1000)));
        assertThat(decision.explanation()).contains("age ").contains("bound ").contains("hottest");
    }

    /** The decision reports the model's numbers: T(age) and tau_max, with T(tau_max) = the bound. */
    @Test
    void reportsTheModelsBoundAndRecoveryTime() {
        Row burst = new Row("burst", 8000, 10000, 0.30, 0.5, 4, 1, false, Action.CHECKPOINT, Reason.CHEAPEST_MOMENT, true);
        Decision decision = POLICY.decide(inputs(burst));

        assertThat(decision.ageBound()).isEqualTo(Duration.ofMillis(7500));
        assertThat(decision.estimatedRecovery()).isEqualTo(Duration.ofMillis(
                Math.round(1000 * RecoveryModel.recoverySeconds(4, 5, 1, 8000, 10000))));
        assertThat(RecoveryModel.recoverySeconds(7.5, 5, 1, 8000, 10000)).isCloseTo(60, org.assertj.core.data.Offset.offset(1e-9));
    }

    /**
     * The pacer logs the explanation of whichever decision first finds the bound unreachable,
     * often one that waits for a running checkpoint: it says why, as the decisions that pace at
     * Young's interval do.
     */
    @Test
    void aDecisionDuringACheckpointSaysWhyTheBoundIsUnreachable() {
        Row overloaded = new Row("input above capacity, checkpoint running", 12000, 10000, 1.0, 0.5, 4, 1, true,
                Action.WAIT, Reason.CHECKPOINT_IN_PROGRESS, false);
        Decision decision = POLICY.decide(inputs(overloaded));

        assertThat(decision.reason()).isEqualTo(Reason.CHECKPOINT_IN_PROGRESS);
        assertThat(decision.boundReachable()).isFalse();
        assertThat(decision.explanation()).startsWith("checkpoint in progress; bound 60.0s unreachable (input at or "
                + "above capacity, so replay never catches up); age ");
    }

    /** Steady load, cost 0.5 s: Young's interval is 60 s with the configured MTBF of 1 h, 10 s with restarts every 100 s. */
    @Test
    void frequentRestartsShortenYoungsInterval() {
        Row steady = new Row("steady at 20 s", 1000, 10000, 0.10, 0.5, 20, 1, false, Action.WAIT, Reason.WITHIN_BOUND, true);
        PacingInputs configured = inputs(steady);
        assertThat(POLICY.decide(configured).reason()).isEqualTo(Reason.WITHIN_BOUND);

        PacingInputs observed = withObservedMtbf(configured, Duration.ofSeconds(100));
        Decision decision = POLICY.decide(observed);
        assertThat(decision.reason()).as(decision.explanation()).isEqualTo(Reason.STEADY_INTERVAL);
        assertThat(decision.explanation()).contains("MTBF 100.0s", "Young 10.0s");

        PacingInputs rareFailures = withObservedMtbf(configured, Duration.ofHours(10));
        assertThat(POLICY.decide(rareFailures).reason()).as("an observed MTBF longer than configured is ignored")
                .isEqualTo(Reason.WITHIN_BOUND);
    }

    /**
     * Quiet load (10% of capacity, bound 480 s, Young 60 s) after a burst to 50% of capacity, at
     * which the bound would be (60-6)*1 - 6 = 48 s: the peak deadline 48 - 0.5 - 1 = 46.5 s comes
     * before Young's interval, so the window opens at 23.25 s and a quiet moment is used.
     */
    @Test
    void aQuietPhaseAfterABurstCheckpointsAheadOfTheNextPeak() {
        PacingInputs quiet = inputs(new Row("quiet at 30 s", 1000, 10000, 0.10, 0.5, 30, 1, false, Action.WAIT,
                Reason.WITHIN_BOUND, true));
        assertThat(POLICY.decide(quiet).reason()).as("without a peak, Young's interval rules").isEqualTo(Reason.WITHIN_BOUND);

        Decision afterBurst = POLICY.decide(withPeakInputRate(quiet, 5000));
        assertThat(afterBurst.checkpointNow()).as(afterBurst.explanation()).isTrue();
        assertThat(afterBurst.reason()).isEqualTo(Reason.CHEAPEST_MOMENT);
        assertThat(afterBurst.explanation()).contains("recent peak of 5000/s", ", 46.5s]");

        PacingInputs early = inputs(new Row("quiet at 20 s", 1000, 10000, 0.10, 0.5, 20, 1, false, Action.WAIT,
                Reason.WITHIN_BOUND, true));
        assertThat(POLICY.decide(withPeakInputRate(early, 5000)).reason()).as("before the peak window opens")
                .isEqualTo(Reason.WITHIN_BOUND);

        PacingInputs busy = inputs(new Row("busy at 30 s", 1000, 10000, 0.90, 0.5, 30, 1, false, Action.WAIT,
                Reason.WITHIN_BOUND, true));
        assertThat(POLICY.decide(withPeakInputRate(busy, 5000)).reason()).as("no headroom: wait, as in any window")
                .isEqualTo(Reason.WAITING_FOR_HEADROOM);

        assertThat(POLICY.decide(withPeakInputRate(quiet, 12000)).reason())
                .as("a peak above capacity (a catch-up after a restart) is ignored").isEqualTo(Reason.WITHIN_BOUND);
        assertThat(POLICY.decide(withPeakInputRate(quiet, 1100)).reason())
                .as("a peak whose deadline is after Young's interval changes nothing").isEqualTo(Reason.WITHIN_BOUND);

        // Checkpoints of 24.5 s: back to back, the state would get 49 s old at the peak, past its 48 s.
        PacingInputs slow = inputs(new Row("quiet at 30 s, slow checkpoints", 1000, 10000, 0.10, 24.5, 30, 1, false,
                Action.WAIT, Reason.WITHIN_BOUND, true));
        Decision unreachablePeak = POLICY.decide(withPeakInputRate(slow, 5000));
        assertThat(unreachablePeak.reason()).as("a peak at which the bound is unreachable is not prepared for: "
                + unreachablePeak.explanation()).isEqualTo(Reason.WITHIN_BOUND);
    }

    @Test
    void aReplayAfterARestartIsLeftAloneEvenPastTheDeadline() {
        PacingInputs pastDeadline = inputs(new Row("burst at the deadline", 8000, 10000, 0.95, 0.5, 6.5, 1, false,
                Action.CHECKPOINT, Reason.AGE_BOUND, true));
        assertThat(POLICY.decide(pastDeadline).reason()).isEqualTo(Reason.AGE_BOUND);

        Decision replaying = POLICY.decide(catchingUp(pastDeadline));
        assertThat(replaying.checkpointNow()).isFalse();
        assertThat(replaying.reason()).as(replaying.explanation()).isEqualTo(Reason.CATCHING_UP);
        assertThat(replaying.boundReachable()).as("unknown while replaying, not unreachable").isTrue();
        assertThat(replaying.ageBound()).isNull();
        assertThat(replaying.explanation()).contains("replaying after a restart");
    }

    @Test
    void withoutInputTheBoundIsUnboundedAndTheFirstCheckpointComesEarly() {
        PacingInputs noInput = new PacingInputs(0, Double.MAX_VALUE, new SubtaskLoad("v", 0, 0, 0), List.of(), false,
                Duration.ZERO, NOW.minusSeconds(1), null, 0, false, Double.NaN);
        Decision decision = POLICY.decide(noInput);

        assertThat(decision.ageBound()).isNull();
        assertThat(decision.reason()).isEqualTo(Reason.STEADY_INTERVAL);
    }

    @Test
    void modelMatchesTheDesignFormula() {
        // tau_max = (RTO - D - R) * (mu - lambda) / lambda - D - R
        assertThat(RecoveryModel.largestAge(a -> RecoveryModel.recoverySeconds(a, 10, 5, 1000, 3000), 120))
                .isCloseTo(105.0 * 2000 / 1000 - 15, offset(1e-5));
        assertThat(RecoveryModel.largestAge(a -> RecoveryModel.recoverySeconds(a, 10, 5, 3000, 3000), 120))
                .isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(RecoveryModel.recoverySeconds(30, 10, 5, 0, 3000)).isEqualTo(15);
        assertThat(RecoveryModel.youngIntervalSeconds(2, 3600)).isEqualTo(120);
    }

    @Test
    void theModelWithACountedBacklogIsTheDesignFormula() {
        assertThat(RecoveryModel.recoveryWithBacklog(1000 * 30.0, 10, 5, 1000, 3000))
                .isCloseTo(RecoveryModel.recoverySeconds(30, 10, 5, 1000, 3000), offset(1e-9));
        assertThat(RecoveryModel.recoveryWithBacklog(0, 10, 5, 0, Double.MAX_VALUE)).isEqualTo(15);
        assertThat(RecoveryModel.recoveryWithBacklog(1000, 10, 5, 3000, 3000)).isInfinite();
    }

    /**
     * Quiet at 1,000/s, 30 s after the checkpoint, but a long burst before left 470,000 records to
     * replay: counted, they leave 6 + (470,000 + 6,000) / 9,000 = 58.9 s of recovery and 10 s more
     * of age, so the quiet moment is used; {@code 1,000 * age} would have said 10 s of recovery.
     */
    @Test
    void aQuietPhaseAfterABurstCarriesTheBurstsRecordsInItsBacklog() {
        PacingInputs quiet = inputs(new Row("quiet at 30 s", 1000, 10000, 0.10, 0.5, 30, 1, false, Action.WAIT,
                Reason.WITHIN_BOUND, true));
        assertThat(POLICY.decide(quiet).reason()).isEqualTo(Reason.WITHIN_BOUND);

        Decision counted = POLICY.decide(withBacklog(quiet, 470_000));
        assertThat(counted.ageBound().toMillis()).isBetween(39_998L, 40_000L);
        assertThat(counted.reason()).as(counted.explanation()).isEqualTo(Reason.CHEAPEST_MOMENT);
    }




    @Test
    void rejectsABoundNotLongerThanDetection() {
        assertThatThrownBy(() -> settings(Duration.ofSeconds(5), Duration.ofSeconds(5)))
                .hasMessageContaining("must be longer than the failure-detection time");
        assertThatThrownBy(() -> settings(Duration.ZERO, Duration.ofSeconds(5)))
                .hasMessageContaining("maxRecoveryTime must be a positive duration");
    }

    private static PacingInputs inputs(Row row) {
        Instant triggered = NOW.minusMillis(Math.round(row.age() * 1000));
        CheckpointSample last = new CheckpointSample(7, triggered, Duration.ofMillis(Math.round(row.cost() * 1000)), 1 << 20);
        return new PacingInputs(row.lambda(), row.mu(), new SubtaskLoad("keyed", 1, row.hottest(), 0), List.of(last),
                row.inProgress(), Duration.ofMillis(Math.round(row.restore() * 1000)), NOW.minusSeconds(600), null,
                row.lambda(), false, Double.NaN);
    }

    /** MTBF 1 h, a decision every second, the production defaults for the rest. */
    private static PacingSettings settings(Duration bound, Duration detection) {
        return new PacingSettings(bound, detection, Duration.ofHours(1), 100L << 20, "http://127.0.0.1:1",
                Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofMinutes(10));
    }

    private static Action action(Decision decision) {
        return decision.checkpointNow() ? Action.CHECKPOINT : Action.WAIT;
    }

    private static PacingInputs withObservedMtbf(PacingInputs in, Duration mtbf) {
        return new PacingInputs(in.inputRate(), in.capacity(), in.hottest(), in.recentCheckpoints(),
                in.checkpointInProgress(), in.restoreEstimate(), in.ageOrigin(), mtbf, in.peakInputRate(),
                in.catchingUp(), in.backlogRecords());
    }

    private static PacingInputs withPeakInputRate(PacingInputs in, double peak) {
        return new PacingInputs(in.inputRate(), in.capacity(), in.hottest(), in.recentCheckpoints(),
                in.checkpointInProgress(), in.restoreEstimate(), in.ageOrigin(), in.observedMtbf(), peak,
                in.catchingUp(), in.backlogRecords());
    }

    private static PacingInputs catchingUp(PacingInputs in) {
        return new PacingInputs(in.inputRate(), in.capacity(), in.hottest(), in.recentCheckpoints(),
                in.checkpointInProgress(), in.restoreEstimate(), in.ageOrigin(), in.observedMtbf(), in.peakInputRate(),
                true, in.backlogRecords());
    }

    private static PacingInputs withBacklog(PacingInputs in, double records) {
        return new PacingInputs(in.inputRate(), in.capacity(), in.hottest(), in.recentCheckpoints(),
                in.checkpointInProgress(), in.restoreEstimate(), in.ageOrigin(), in.observedMtbf(), in.peakInputRate(),
                in.catchingUp(), records);
    }
}
