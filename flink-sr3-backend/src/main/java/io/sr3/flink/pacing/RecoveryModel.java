package io.sr3.flink.pacing;

import java.time.Duration;
import java.util.function.DoubleUnaryOperator;

/**
 * The recovery-time model of DESIGN section 6, in seconds. Pure functions.
 *
 * <pre>
 *   T(tau)  = D + R + lambda * (tau + D + R) / (mu - lambda)        recovery time at checkpoint age tau
 *   tau_max = (RTO - D - R) * (mu - lambda) / lambda - D - R        largest age with T(tau) <= RTO
 *   young   = sqrt(2 * C * MTBF)                                    Young's checkpoint interval
 * </pre>
 *
 * D is the failure-detection time, R the restore time of the current state, lambda the input rate
 * and mu the processing capacity (records/s), C the cost of one checkpoint. The policy counts the
 * backlog ({@link #recoveryWithBacklog}) instead of assuming {@code lambda * tau}, so that a burst
 * that ended stays in the backlog of the quiet phase after it.
 */
final class RecoveryModel {

    /** Ages beyond a year count as unbounded. */
    private static final double LONGEST_AGE = 365 * 24 * 3600.0;

    private RecoveryModel() {}

    /** T(tau): infinite when {@code lambda >= mu}, since the backlog then never shrinks. */
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
     * Recovery time with a known {@code backlog} (records that arrived since the checkpoint, up to
     * the failure): detection and restore, then replay at {@code mu} until the backlog and what
     * arrived meanwhile at {@code lambda} are processed. With {@code backlog = lambda * age} this is
     * {@link #recoverySeconds}.
     */
    public static double recoveryWithBacklog(double backlog, double detection, double restore, double lambda,
            double mu) {
        if (lambda >= mu) {
            return Double.POSITIVE_INFINITY;
        }
        double downtime = detection + restore;
        return downtime + (backlog + lambda * downtime) / (mu - lambda);
    }

    /**
     * The largest age {@code a >= 0} with {@code recoveryAtAge(a) <= rto}, for a recovery time that
     * does not decrease with the age: infinite when no age passes the bound, negative infinity
     * when even age 0 does. Found by bisection.
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

    /**
     * R: the largest share of the state one subtask restores (subtasks restore in parallel) at
     * {@code bytesPerSecond}, the slowest rate recent restores achieved or the configured one.
     */
    public static Duration restoreTime(long stateBytes, long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("Restore bandwidth must be > 0 bytes/s, was " + bytesPerSecond);
        }
        return Duration.ofMillis((long) Math.ceil(Math.max(0, stateBytes) * 1000.0 / bytesPerSecond));
    }
}
