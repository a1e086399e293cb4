package io.sr3.flink.pacing;

import io.sr3.flink.pacing.Decision.Reason;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.DoubleUnaryOperator;

/**
 * Decides from measured load whether to checkpoint now: a pure function of its {@link PacingInputs},
 * the {@link PacingSettings} and the injected {@link Clock}. The rules, in order (DESIGN section 6):
 * <ol>
 *   <li>A running checkpoint, or a job replaying its backlog after a restart: wait.
 *   <li>tau_max is the largest age whose recovery time ({@link RecoveryModel}) stays within the
 *       bound, counting the records that arrived since the last checkpoint. A state is restorable
 *       only once its checkpoint completed, C after its trigger (C: the longest of the last
 *       {@value #COST_WINDOW}), so even back to back it gets 2 C old: below that no schedule meets
 *       the bound, and the policy paces at Young's interval instead of thrashing.
 *   <li>At the deadline tau_max - C - decision period: checkpoint, whatever the load.
 *   <li>Loose bound (Young's interval sqrt(2 C MTBF) comes before the deadline; MTBF the configured
 *       or the observed one, whichever is shorter): checkpoint at Young's interval with headroom.
 *   <li>Tight bound: the window opens at {@value #WINDOW_OPEN} of the deadline; inside it,
 *       checkpoint at the first moment with headroom.
 *   <li>Ahead of a peak: when the recent peak input rate would leave a deadline before Young's
 *       interval, the window is measured against that deadline, so that a returning burst finds
 *       the state young instead of forcing a checkpoint at its busiest moment. A peak at which
 *       the bound is unreachable is ignored.
 * </ol>
 * Headroom: the most loaded subtask (busy plus back-pressured) is at most {@value #HEADROOM_LOAD},
 * so a barrier finds idle time instead of adding latency. Without a completed checkpoint C is 0,
 * so the first checkpoint comes early and gives a measurement.
 */
@ThreadSafe
final class PacingPolicy {

    static final int COST_WINDOW = 3;
    static final double HEADROOM_LOAD = 0.5;
    static final double WINDOW_OPEN = 0.5;

    private final PacingSettings settings;
    private final Clock clock;

    PacingPolicy(PacingSettings settings, Clock clock) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    Decision decide(PacingInputs in) {
        CheckpointSample last = in.lastCheckpoint();
        double age = Math.max(0, seconds(Duration.between(last != null ? last.triggered() : in.ageOrigin(),
                clock.instant())));
        double rto = seconds(settings.maxRecoveryTime());
        double d = seconds(settings.failureDetection());
        double r = seconds(in.restoreEstimate());
        double lambda = in.inputRate();
        double mu = in.capacity();
        double peak = in.peakInputRate();
        double cost = checkpointCost(in.recentCheckpoints());
        double backlog = Double.isNaN(in.backlogRecords()) ? lambda * age : in.backlogRecords();
        // The recovery if the failure struck when the state is `a` old, with the backlog then.
        DoubleUnaryOperator recoveryAt = a -> RecoveryModel.recoveryWithBacklog(
                a >= age ? backlog + lambda * (a - age) : age > 0 ? backlog * a / age : 0, d, r, lambda, mu);
        double tauMax = RecoveryModel.largestAge(recoveryAt, rto);
        double recovery = recoveryAt.applyAsDouble(age);
        double mtbf = seconds(settings.mtbf());
        if (in.observedMtbf() != null) {
            mtbf = Math.min(mtbf, seconds(in.observedMtbf())); // failures come more often than configured
        }
        double young = RecoveryModel.youngIntervalSeconds(cost, mtbf);
        SubtaskLoad hottest = in.hottest();
        boolean headroom = hottest == null || hottest.load() <= HEADROOM_LOAD;
        boolean reachable = meetable(tauMax, cost);
        String numbers = String.format(Locale.ROOT, "age %s, bound %s, est. recovery %s, backlog %.0f records, "
                        + "input %.0f/s (recent peak %.0f/s) of capacity %.0f/s, checkpoint cost %s, MTBF %s, Young %s, "
                        + "hottest %s", fmt(age), fmt(tauMax), fmt(recovery), backlog, lambda, peak, mu, fmt(cost),
                fmt(mtbf), fmt(young), hottest == null ? "n/a" : String.format(Locale.ROOT, "%s#%d at %.0f%%",
                        hottest.vertex(), hottest.subtask(), 100 * hottest.load()));
        BiFunction<Reason, String, Decision> decision = (reason, why) -> new Decision(reason, why + "; " + numbers,
                toDuration(tauMax), toDuration(recovery), toDuration(age), reachable);
        String unreachable = reachable ? null : "bound " + fmt(rto) + " unreachable (" + (lambda >= mu
                ? "input at or above capacity, so replay never catches up"
                : tauMax < 0 ? "detection + restore + replay exceed it even at age 0"
                : "checkpoints back to back would still let the age pass " + fmt(tauMax) + ": each takes " + fmt(cost))
                + ")";

        if (in.checkpointInProgress()) {
            // Whichever decision first finds the bound unreachable is logged: this one says why too.
            return decision.apply(Reason.CHECKPOINT_IN_PROGRESS, "checkpoint in progress"
                    + (reachable ? "" : "; " + unreachable));
        }
        if (in.catchingUp()) {
            return new Decision(Reason.CATCHING_UP, "replaying after a restart at full speed: a checkpoint now would "
                    + "slow the replay, and the bound is known again once the job caught up; " + numbers, null, null,
                    toDuration(age), true);
        }
        if (!reachable) {
            // Whatever the load: waiting for headroom while saturated would let the age grow without limit.
            return age >= young
                    ? decision.apply(Reason.STEADY_INTERVAL, unreachable + "; checkpointing at Young's interval")
                    : decision.apply(Reason.BOUND_UNREACHABLE, unreachable + "; pacing at Young's interval");
        }
        double deadline = tauMax - cost - seconds(settings.decisionPeriod());
        if (age >= deadline) {
            return decision.apply(Reason.AGE_BOUND, "age reaches the deadline " + fmt(Math.max(0, deadline))
                    + " (bound - cost - decision period)");
        }
        double peakTau = RecoveryModel.largestAge(a -> RecoveryModel.recoveryWithBacklog(peak * a, d, r, peak, mu), rto);
        double peakDeadline = peakTau - cost - seconds(settings.decisionPeriod());
        boolean aheadOfPeak = meetable(peakTau, cost) && peakDeadline > 0 && peakDeadline < Math.min(deadline, young);
        String noHeadroom = "waiting for headroom until the deadline " + fmt(deadline);
        if (young <= deadline && !aheadOfPeak) {
            return age < young ? decision.apply(Reason.WITHIN_BOUND, "before Young's interval")
                    : headroom ? decision.apply(Reason.STEADY_INTERVAL, "Young's interval reached with headroom")
                    : decision.apply(Reason.WAITING_FOR_HEADROOM, "past Young's interval, " + noHeadroom);
        }
        double target = aheadOfPeak ? peakDeadline : deadline;
        double open = WINDOW_OPEN * target;
        String window = "the window [" + fmt(open) + ", " + fmt(target) + "]" + (aheadOfPeak
                ? String.format(Locale.ROOT, " that the recent peak of %.0f/s would leave", peak) : "");
        return age < open ? decision.apply(Reason.WITHIN_BOUND, "before " + window)
                : headroom ? decision.apply(Reason.CHEAPEST_MOMENT, "inside " + window + " with headroom")
                : decision.apply(Reason.WAITING_FOR_HEADROOM, "inside " + window + ", " + noHeadroom);
    }

    /** Whether some schedule keeps the age under {@code tau}: back to back, the restorable state gets {@code 2 cost} old. */
    static boolean meetable(double tau, double cost) {
        return tau >= 2 * cost;
    }

    /** C: the longest of the last {@link #COST_WINDOW} checkpoint durations, in seconds; 0 without any. */
    static double checkpointCost(List<CheckpointSample> recent) {
        return recent.subList(Math.max(0, recent.size() - COST_WINDOW), recent.size()).stream()
                .mapToDouble(c -> seconds(c.duration())).max().orElse(0);
    }

    static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    @Nullable
    private static Duration toDuration(double seconds) {
        return Double.isNaN(seconds) || seconds == Double.POSITIVE_INFINITY ? null
                : Duration.ofMillis(Math.round(Math.max(0, seconds) * 1000));
    }

    private static String fmt(double seconds) {
        return Double.isInfinite(seconds) ? (seconds > 0 ? "unbounded" : "none")
                : String.format(Locale.ROOT, "%.1fs", seconds);
    }
}
