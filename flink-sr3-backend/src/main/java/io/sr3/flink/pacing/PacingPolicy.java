package io.sr3.flink.pacing;

import io.sr3.flink.pacing.Decision.Action;
import io.sr3.flink.pacing.Decision.Reason;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.DoubleUnaryOperator;

/**
 * Decides, from measured load, whether to checkpoint now: a pure function of its
 * {@link PacingInputs}, its {@link Settings} and the injected {@link Clock}.
 *
 * <p>The rules, in order (DESIGN section 6):
 * <ol>
 *   <li>A running checkpoint: wait. A job replaying its backlog after a restart: wait until it
 *       caught up ({@link Reason#CATCHING_UP}).
 *   <li>The bound {@code tau_max}: the largest checkpoint age whose recovery time
 *       ({@link RecoveryModel}) stays within the bound, from the records that arrived since the
 *       last checkpoint and the current input rate. A checkpoint's state is restorable only once
 *       it completed, {@code C} after its trigger (the longest of the last {@value #COST_WINDOW}),
 *       so even back to back the state gets {@code 2 C} old; below that no schedule meets the
 *       bound ({@code boundReachable = false}) and the policy paces at Young's interval.
 *   <li>The deadline {@code tau_max - C - decision period}: at or past it, checkpoint
 *       ({@link Reason#AGE_BOUND}), whatever the load.
 *   <li>Loose bound (Young's interval {@code sqrt(2 C MTBF)} before the deadline, MTBF the
 *       configured or the observed one, whichever is shorter): checkpoint at Young's interval
 *       with headroom ({@link Reason#STEADY_INTERVAL}), else wait for headroom until the deadline.
 *   <li>Tight bound: the window opens at {@link Settings#windowOpenFraction()} of the deadline;
 *       inside it, checkpoint at the first moment with headroom ({@link Reason#CHEAPEST_MOMENT}).
 *   <li>Ahead of a peak: when the recent peak input rate would allow a shorter deadline that
 *       comes before Young's interval, the window is measured against that deadline, so that a
 *       returning burst finds the state young instead of forcing a checkpoint at its busiest
 *       moment. A peak at which the bound is unreachable is ignored.
 * </ol>
 * "Headroom": the most loaded subtask (busy plus back-pressured) is at most
 * {@link Settings#headroomLoad()}, the input has settled ({@link BurstOutlook#settling()}), and
 * it is not in a burst to wait out ({@link BurstOutlook#burstToWaitOut()}): a barrier then finds
 * idle time instead of adding latency. Without a completed checkpoint, C is 0, so the first
 * checkpoint comes early and gives a measurement.
 */
@ThreadSafe
final class PacingPolicy {

    /** How many recent checkpoints the cost estimate looks at (the longest counts). */
    public static final int COST_WINDOW = 3;

    /**
     * The policy's constants.
     *
     * @param maxRecoveryTime RTO, {@code sr3.pacing.max-recovery-time}
     * @param failureDetection D, {@code sr3.pacing.failure-detection-time}
     * @param mtbf mean time between failures, {@code sr3.pacing.mtbf}
     * @param decisionPeriod how often the driver asks; the deadline keeps one period of margin
     * @param headroomLoad a subtask at or below this load (busy + back-pressured) has headroom
     * @param windowOpenFraction under a tight bound, the cheapest-moment window opens at this
     *     fraction of the deadline
     */
    public record Settings(Duration maxRecoveryTime, Duration failureDetection, Duration mtbf, Duration decisionPeriod,
            double headroomLoad, double windowOpenFraction) {

        /** Half busy: below it a task has idle time for barriers in every measurement period. */
        public static final double DEFAULT_HEADROOM_LOAD = 0.5;
        /** Under a tight bound, never checkpoint before half of the allowed age has passed. */
        public static final double DEFAULT_WINDOW_OPEN_FRACTION = 0.5;

        public Settings {
            requirePositive(maxRecoveryTime, "maxRecoveryTime");
            requirePositive(failureDetection, "failureDetection");
            requirePositive(mtbf, "mtbf");
            requirePositive(decisionPeriod, "decisionPeriod");
            if (failureDetection.compareTo(maxRecoveryTime) >= 0) {
                throw new IllegalArgumentException("The recovery-time bound (" + maxRecoveryTime
                        + ") must be longer than the failure-detection time (" + failureDetection + ")");
            }
            if (!(headroomLoad > 0 && headroomLoad <= 1)) {
                throw new IllegalArgumentException("headroomLoad must be in (0, 1], was " + headroomLoad);
            }
            if (!(windowOpenFraction >= 0 && windowOpenFraction <= 1)) {
                throw new IllegalArgumentException("windowOpenFraction must be in [0, 1], was " + windowOpenFraction);
            }
        }

        public static Settings of(Duration maxRecoveryTime, Duration failureDetection, Duration mtbf,
                Duration decisionPeriod) {
            return new Settings(maxRecoveryTime, failureDetection, mtbf, decisionPeriod, DEFAULT_HEADROOM_LOAD,
                    DEFAULT_WINDOW_OPEN_FRACTION);
        }

        private static void requirePositive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be a positive duration, was " + d);
            }
        }
    }

    private final Settings settings;
    private final Clock clock;

    public PacingPolicy(Settings settings, Clock clock) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public Settings settings() {
        return settings;
    }

    public Decision decide(PacingInputs in) {
        Instant now = clock.instant();
        CheckpointSample last = in.lastCheckpoint();
        double age = Math.max(0, seconds(Duration.between(last != null ? last.triggered() : in.ageOrigin(), now)));
        double rto = seconds(settings.maxRecoveryTime());
        double d = seconds(settings.failureDetection());
        double r = seconds(in.restoreEstimate());
        double lambda = in.inputRate();
        double mu = in.capacity();
        double cost = checkpointCost(in.recentCheckpoints());
        double period = seconds(settings.decisionPeriod());
        double backlog = Double.isNaN(in.backlogRecords()) ? lambda * age : in.backlogRecords();
        BurstOutlook bursts = in.bursts();
        // The backlog if the failure struck when the state is `a` old.
        DoubleUnaryOperator backlogAt = a -> a >= age
                ? backlog + lambda * (a - age)
                : age > 0 ? backlog * a / age : 0;
        DoubleUnaryOperator recoveryAt = a -> RecoveryModel.recoveryWithBacklog(backlogAt.applyAsDouble(a), d, r,
                lambda, mu);
        double tauMax = RecoveryModel.largestAge(recoveryAt, rto);
        double recovery = recoveryAt.applyAsDouble(age);
        double mtbf = seconds(settings.mtbf());
        if (in.observedMtbf() != null && seconds(in.observedMtbf()) < mtbf) {
            mtbf = seconds(in.observedMtbf()); // failures come more often than configured: checkpoint more often
        }
        double young = RecoveryModel.youngIntervalSeconds(cost, mtbf);
        SubtaskLoad hottest = in.hottest();
        boolean settling = bursts != null && bursts.settling();
        boolean inBurst = bursts != null && bursts.inBurst();
        boolean burstToWaitOut = bursts != null && bursts.burstToWaitOut();
        boolean headroom = (hottest == null || hottest.load() <= settings.headroomLoad()) && !settling
                && !burstToWaitOut;
        String noHeadroom = settling
                ? String.format(Locale.ROOT, "input %.0f/s not settled (quiet rate %.0f/s; a burst beginning, or no "
                        + "rate sample since a restart: the load measured over the last rate window is not what comes), "
                        + "waiting for it to settle", lambda, bursts.quietRate())
                : burstToWaitOut
                        ? "in a burst (its records would wait behind the checkpoint's work), waiting for it to end"
                        : "waiting for headroom";
        boolean reachable = meetable(tauMax, cost);
        Decision.Builder out = new Decision.Builder(toDuration(tauMax), toDuration(recovery), toDuration(age), reachable);
        String load = String.format(Locale.ROOT, "age %s, bound %s, est. recovery %s, backlog %.0f records, input %.0f/s "
                        + "(recent peak %.0f/s%s) of capacity %.0f/s, checkpoint cost %s, MTBF %s, Young %s, hottest %s",
                fmt(age), fmt(tauMax), fmt(recovery), backlog, lambda, in.peakInputRate(), describe(bursts), mu,
                fmt(cost), fmt(mtbf), fmt(young), hottest == null ? "n/a"
                        : String.format(Locale.ROOT, "%s#%d at %.0f%%", hottest.vertex(), hottest.subtask(),
                                100 * hottest.load()));

        String unreachable = reachable ? "" : "bound " + fmt(rto) + " unreachable (" + (lambda >= mu
                ? "input at or above capacity, so replay never catches up"
                : tauMax < 0
                        ? "detection + restore + replay exceed it even at age 0"
                        : "checkpoints back to back would still let the age pass " + fmt(tauMax) + ": each takes "
                                + fmt(cost)) + "); ";
        if (in.checkpointInProgress()) {
            // The explanation of an unreachable bound is logged with whatever decision finds it so.
            return out.build(Action.WAIT, Reason.CHECKPOINT_IN_PROGRESS, "checkpoint in progress; " + unreachable + load);
        }
        if (in.catchingUp()) {
            return new Decision.Builder(null, null, toDuration(age), true).build(Action.WAIT, Reason.CATCHING_UP,
                    "replaying after a restart at full speed: a checkpoint now would slow the replay, and the bound is "
                            + "known again once the job caught up (Flink's periodic checkpoints continue); " + load);
        }
        if (!reachable) {
            if (age >= young) {
                // Whatever the load: waiting for headroom while saturated would let the age grow without limit.
                return out.build(Action.CHECKPOINT, Reason.STEADY_INTERVAL, unreachable
                        + "checkpointing at Young's interval; " + load);
            }
            return out.build(Action.WAIT, Reason.BOUND_UNREACHABLE, unreachable
                    + "pacing at Young's interval instead of back to back; " + load);
        }
        double deadline = tauMax - cost - period;
        if (age >= deadline) {
            return out.build(Action.CHECKPOINT, Reason.AGE_BOUND, "age reaches the deadline "
                    + fmt(Math.max(0, deadline)) + " (bound - cost - decision period); " + load);
        }
        double peakTau = inBurst ? Double.NEGATIVE_INFINITY : RecoveryModel.largestAge(a -> RecoveryModel
                .recoveryWithBacklog(in.peakInputRate() * a, d, r, in.peakInputRate(), mu), rto);
        double peakDeadline = peakTau - cost - period;
        // At a peak where the bound is unreachable, preparing for it would only checkpoint back to back.
        boolean aheadOfPeak = meetable(peakTau, cost) && peakDeadline > 0 && peakDeadline < Math.min(deadline, young);
        if (young <= deadline && !aheadOfPeak) {
            if (age < young) {
                return out.build(Action.WAIT, Reason.WITHIN_BOUND, "before Young's interval; " + load);
            }
            return headroom
                    ? out.build(Action.CHECKPOINT, Reason.STEADY_INTERVAL, "Young's interval reached with headroom; " + load)
                    : out.build(Action.WAIT, Reason.WAITING_FOR_HEADROOM, "past Young's interval, " + noHeadroom
                            + " until the deadline " + fmt(deadline) + "; " + load);
        }
        double target = aheadOfPeak ? peakDeadline : deadline;
        double open = settings.windowOpenFraction() * target;
        String window = aheadOfPeak
                ? String.format(Locale.ROOT, "the window [%s, %s] that the recent peak of %.0f/s would leave", fmt(open),
                        fmt(target), in.peakInputRate())
                : "the window [" + fmt(open) + ", " + fmt(deadline) + "]";
        if (age < open) {
            return out.build(Action.WAIT, Reason.WITHIN_BOUND, "before " + window + "; " + load);
        }
        return headroom
                ? out.build(Action.CHECKPOINT, Reason.CHEAPEST_MOMENT, "inside " + window + " with headroom; " + load)
                : out.build(Action.WAIT, Reason.WAITING_FOR_HEADROOM, "inside " + window + ", " + noHeadroom
                        + " until the deadline " + fmt(deadline) + "; " + load);
    }

    private static String describe(@Nullable BurstOutlook bursts) {
        if (bursts == null) {
            return "";
        }
        return bursts.inBurst()
                ? String.format(Locale.ROOT, ", in a burst with %,.0f records so far, expected to last", bursts.burstRecords())
                : String.format(Locale.ROOT, ", bursts of up to %,.0f records", bursts.largestRecords());
    }

    /**
     * Whether some schedule keeps the age under {@code tau}: a checkpoint's state is restorable only
     * once it completed, {@code cost} after its trigger, so even back to back the restorable state
     * gets twice that old (plus up to one decision period). Chasing a shorter {@code tau} would keep
     * the job checkpointing all the time and still miss it.
     */
    static boolean meetable(double tau, double cost) {
        return tau >= 2 * cost;
    }

    /** C: the longest of the last {@link #COST_WINDOW} checkpoint durations, in seconds; 0 without any. */
    static double checkpointCost(List<CheckpointSample> recent) {
        double cost = 0;
        for (int i = Math.max(0, recent.size() - COST_WINDOW); i < recent.size(); i++) {
            cost = Math.max(cost, seconds(recent.get(i).duration()));
        }
        return cost;
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    @Nullable
    private static Duration toDuration(double seconds) {
        if (Double.isNaN(seconds) || seconds == Double.POSITIVE_INFINITY) {
            return null;
        }
        if (seconds == Double.NEGATIVE_INFINITY) {
            return Duration.ZERO;
        }
        return Duration.ofMillis(Math.round(Math.max(0, seconds) * 1000));
    }

    private static String fmt(double seconds) {
        if (Double.isInfinite(seconds)) {
            return seconds > 0 ? "unbounded" : "none";
        }
        return String.format(Locale.ROOT, "%.1fs", seconds);
    }
}
