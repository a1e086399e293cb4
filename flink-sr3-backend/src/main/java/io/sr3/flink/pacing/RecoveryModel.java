package io.sr3.flink.pacing;

import java.util.function.DoubleUnaryOperator;

/**
 * The recovery-time model of DESIGN section 6, in seconds.
 *
 * <pre>
 *   T(tau)  = D + R + lambda * (tau + D + R) / (mu - lambda)        recovery time at checkpoint age tau
 *   tau_max = (RTO - D - R) * (mu - lambda) / lambda - D - R        largest age with T(tau) <= RTO
 *   young   = sqrt(2 * C * MTBF)                                    Young's checkpoint interval
 * </pre>
 *
 * D is the failure-detection time, R the restore time of the current state, lambda the input rate
 * and mu the processing capacity (records/s), C the cost of one checkpoint. Pure functions.
 *
 * <p>The design's formula assumes the input stays at lambda for the whole recovery and that the
 * backlog is {@code lambda * tau}. For bursty input both are off: a burst that ends soon after a
 * failure leaves the replay more spare capacity, and a burst that ended before it left more
 * records to replay than the quiet rate suggests. So the policy uses the general form
 * ({@link #recoverySeconds(double, double, double, InputForecast, double)}), with the counted
 * backlog and an {@link InputForecast}, and finds tau_max by {@link #largestAge}.
 */
public final class RecoveryModel {

    /** Ages beyond a year count as unbounded. */
    private static final double LONGEST_AGE = 365 * 24 * 3600.0;

    private RecoveryModel() {}

    /**
     * Recovery time (s) if a failure strikes {@code age} seconds after the last completed
     * checkpoint: detection, restore, then replaying the records since the checkpoint and those
     * that arrived meanwhile at the spare capacity {@code mu - lambda}. Infinite when
     * {@code lambda >= mu}: the backlog never shrinks.
     */
    public static double recoverySeconds(double age, double detection, double restore, double lambda, double mu) {
        if (lambda <= 0) {
            return detection + restore;
        }
        if (lambda >= mu) {
            return Double.POSITIVE_INFINITY;
        }
        return detection + restore + lambda * (age + detection + restore) / (mu - lambda);
    }

    /**
     * Recovery time (s) with a known backlog and an input forecast: detection and restore, then
     * the job replays at {@code mu} until it has processed the {@code backlog} (records that arrived
     * since the checkpoint, up to the failure) and everything that arrived since the failure.
     * Infinite when the input the forecast ends with is at or above {@code mu}.
     *
     * <p>With {@code backlog = lambda * age} and a constant forecast this is
     * {@link #recoverySeconds(double, double, double, double, double)}. With a burst that ends,
     * the replay first competes with the burst's rate, then with the rate after it.
     */
    public static double recoverySeconds(double backlog, double detection, double restore, InputForecast input,
            double mu) {
        double downtime = detection + restore;
        if (input.rate() < mu) {
            // Caught up while the first rate lasts: mu * (t - downtime) = backlog + rate * t.
            double t = downtime + (backlog + input.rate() * downtime) / (mu - input.rate());
            if (t <= input.seconds()) {
                return t;
            }
        }
        if (!input.ends() || input.thenRate() >= mu) {
            return Double.POSITIVE_INFINITY;
        }
        // mu * (t - downtime) = backlog + rate * seconds + thenRate * (t - seconds)
        return downtime + (backlog + (input.rate() - input.thenRate()) * input.seconds() + input.thenRate() * downtime)
                / (mu - input.thenRate());
    }

    /**
     * The largest age {@code a >= 0} with {@code recoveryAtAge(a) <= rto}, for a recovery time that
     * does not decrease with the age: infinite when no age passes the bound, negative infinity
     * when even age 0 does. Found by bisection, for models without a closed form.
     */
    public static double largestAge(DoubleUnaryOperator recoveryAtAge, double rto) {
        if (!(recoveryAtAge.applyAsDouble(0) <= rto)) {
            return Double.NEGATIVE_INFINITY;
        }
        if (recoveryAtAge.applyAsDouble(LONGEST_AGE) <= rto) {
            return Double.POSITIVE_INFINITY;
        }
        double ok = 0;
        double tooOld = LONGEST_AGE;
        for (int i = 0; i < 100 && tooOld - ok > 1e-6; i++) {
            double mid = (ok + tooOld) / 2;
            if (recoveryAtAge.applyAsDouble(mid) <= rto) {
                ok = mid;
            } else {
                tooOld = mid;
            }
        }
        return ok;
    }

    /** Young's first-order optimal checkpoint interval (s) for cost {@code cost} and mean time between failures. */
    public static double youngIntervalSeconds(double cost, double mtbf) {
        return Math.sqrt(2 * Math.max(0, cost) * mtbf);
    }
}
