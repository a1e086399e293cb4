package io.sr3.flink.pacing;

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
 */
public final class RecoveryModel {

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
     * The largest checkpoint age (s) that keeps {@link #recoverySeconds} within {@code rto};
     * infinite without input, negative when even age 0 misses the bound.
     */
    public static double maxAgeSeconds(double rto, double detection, double restore, double lambda, double mu) {
        double base = detection + restore;
        if (lambda >= mu) {
            return Double.NEGATIVE_INFINITY;
        }
        if (lambda <= 0) {
            return base <= rto ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
        }
        return (rto - base) * (mu - lambda) / lambda - base;
    }

    /** Young's first-order optimal checkpoint interval (s) for cost {@code cost} and mean time between failures. */
    public static double youngIntervalSeconds(double cost, double mtbf) {
        return Math.sqrt(2 * Math.max(0, cost) * mtbf);
    }
}
