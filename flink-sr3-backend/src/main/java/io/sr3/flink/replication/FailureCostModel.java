package io.sr3.flink.replication;

/**
 * The failure-cost model of DESIGN section 5: what losing one subtask's state copies of an
 * operator costs, in stalled subtask-seconds. Pure functions.
 *
 * <pre>
 *   R      = (stateBytes / parallelism) / restoreBytesPerSecond        subtasks restore in parallel
 *   replay = lambda * (age + D + R) / (mu - lambda)                      +Inf when lambda >= mu
 *   cost   = (D + R + replay) * failoverRegionSubtasks
 * </pre>
 *
 * lambda and mu are the input rate and the capacity per subtask, age the checkpoint's expected age
 * and D the failure detection. The replay term is the backlog part of the pacer's recovery model
 * ({@code io.sr3.flink.pacing.RecoveryModel#recoverySeconds}, DESIGN section 6), re-derived here
 * because that class is package-private and this package stands alone.
 */
public final class FailureCostModel {

    private FailureCostModel() {}

    /** The expected cost of losing the state copies of one subtask of {@code op}. */
    public static OperatorCost cost(OperatorProfile op, RecoveryFacts facts) {
        double detection = facts.detectionSeconds();
        double restore = (double) op.stateBytes() / op.parallelism() / facts.restoreBytesPerSecond();
        double lambda = op.inputRecordsPerSecond() / op.parallelism();
        double mu = op.capacityRecordsPerSecond() / op.parallelism();
        double replay = replaySeconds(lambda, mu, facts.checkpointAgeSeconds() + detection + restore);
        double stalled = (detection + restore + replay) * op.failoverRegionSubtasks();
        return new OperatorCost(op, restore, replay, stalled);
    }

    /** Time to work off what arrived during {@code behindSeconds} while new input keeps arriving. */
    static double replaySeconds(double lambda, double mu, double behindSeconds) {
        if (lambda <= 0) {
            return 0;
        }
        if (lambda >= mu) {
            return Double.POSITIVE_INFINITY;
        }
        return lambda * behindSeconds / (mu - lambda); // 0 when mu is +Inf
    }
}
