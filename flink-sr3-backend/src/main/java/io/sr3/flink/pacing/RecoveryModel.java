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
 * D is the failure-detection time, R the restore time, lambda the input rate and mu the capacity
 * (records/s), C the cost of one checkpoint. The policy counts the backlog
 * ({@link #recoveryWithBacklog}) instead of assuming {@code lambda * tau}, so that a burst that
 * ended stays in the backlog of the quiet phase after it.
 */
final class RecoveryModel {

    /** Ages beyond a year count as unbounded. */
    private static final double LONGEST_AGE = 365 * 24 * 3600.0;

    private RecoveryModel() {}

    /** T(tau): infinite when {@code lambda >= mu}, since the backlog then never shrinks. */
    static double recoverySeconds(double age, double detection, double restore, double lambda, double mu) {
        return lambda <= 0 ? detection + restore : recoveryWithBacklog(lambda * age, detection, restore, lambda, mu);
    }

    /** Detection and restore, then replay at {@code mu} of the backlog and of what arrives meanwhile at {@code lambda}. */
    static double recoveryWithBacklog(double backlog, double detection, double restore, double lambda, double mu) {
        double downtime = detection + restore;
        return lambda >= mu ? Double.POSITIVE_INFINITY : downtime + (backlog + lambda * downtime) / (mu - lambda);
    }

    /**
     * The largest age {@code a >= 0} with {@code recoveryAtAge(a) <= rto}, by bisection, for a
     * recovery time that does not decrease with the age: infinite when no age passes the bound,
     * negative infinity when even age 0 does.
     */
    static double largestAge(DoubleUnaryOperator recoveryAtAge, double rto) {
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

    static double youngIntervalSeconds(double cost, double mtbf) {
        return Math.sqrt(2 * Math.max(0, cost) * mtbf);
    }

    /** R: the largest share of the state one subtask restores (subtasks restore in parallel) at {@code bytesPerSecond}. */
    static Duration restoreTime(long stateBytes, long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            throw new IllegalArgumentException("Restore bandwidth must be > 0 bytes/s, was " + bytesPerSecond);
        }
        return Duration.ofMillis((long) Math.ceil(Math.max(0, stateBytes) * 1000.0 / bytesPerSecond));
    }
}
