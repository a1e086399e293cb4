package io.sr3.flink.replication;

import java.util.Objects;

/**
 * The expected cost of losing one subtask's state copies of one operator, as computed by
 * {@link FailureCostModel#cost}. Times in seconds; the replay (and so the stall) is +Inf when the
 * operator's input outpaces its capacity.
 *
 * @param operator what the cost was computed from
 * @param restoreSeconds R: one subtask's share of the state over the restore rate
 * @param replaySeconds the time to work off the backlog after the restore
 * @param stalledSubtaskSeconds the failure cost: (D + R + replay) times the failover region's subtasks
 */
public record OperatorCost(OperatorProfile operator, double restoreSeconds, double replaySeconds,
        double stalledSubtaskSeconds) {

    public OperatorCost {
        Objects.requireNonNull(operator, "operator");
        check("restoreSeconds", restoreSeconds, operator);
        check("replaySeconds", replaySeconds, operator);
        check("stalledSubtaskSeconds", stalledSubtaskSeconds, operator);
    }

    /** Whether the backlog never shrinks ({@code lambda >= mu}), so that the cost is unbounded. */
    public boolean isUnbounded() {
        return Double.isInfinite(stalledSubtaskSeconds);
    }

    private static void check(String field, double seconds, OperatorProfile operator) {
        if (!(seconds >= 0)) { // also rejects NaN
            throw new IllegalArgumentException(String.format("Operator %s (%s): %s must be >= 0, was %s",
                    operator.vertexId(), operator.name(), field, seconds));
        }
    }
}
