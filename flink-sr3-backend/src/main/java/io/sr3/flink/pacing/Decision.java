package io.sr3.flink.pacing;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;

/**
 * What {@link PacingPolicy} decided, why, and the numbers it decided on.
 *
 * @param action checkpoint now or wait
 * @param reason the rule that decided
 * @param explanation one sentence with the numbers, for the log
 * @param ageBound tau_max, the largest checkpoint age that keeps the recovery time within the
 *     bound; null when it is unbounded (no input)
 * @param estimatedRecovery the model's recovery time if a failure struck now; null when infinite
 *     (input at or above capacity)
 * @param checkpointAge age of the state a restore would start from
 * @param boundReachable false when no schedule meets the bound, not even checkpoints back to back
 */
public record Decision(
        Action action,
        Reason reason,
        String explanation,
        @Nullable Duration ageBound,
        @Nullable Duration estimatedRecovery,
        Duration checkpointAge,
        boolean boundReachable) {

    /** Checkpoint now, or not yet. */
    public enum Action {
        CHECKPOINT,
        WAIT
    }

    /** The rule behind a decision; the first three trigger, the others wait. */
    public enum Reason {
        /** The age would pass tau_max before another checkpoint could complete. */
        AGE_BOUND,
        /** Inside the allowed window, the hottest subtasks have headroom now. */
        CHEAPEST_MOMENT,
        /** Young's interval reached under a load that leaves headroom. */
        STEADY_INTERVAL,
        /** A checkpoint is running (or was just requested). */
        CHECKPOINT_IN_PROGRESS,
        /** Well inside the bound and before the steady interval. */
        WITHIN_BOUND,
        /** Past the steady interval or inside the window, but the hottest subtasks are busy: wait for a cheaper moment. */
        WAITING_FOR_HEADROOM,
        /**
         * No schedule meets the bound, not even checkpoints back to back; pacing at the steady
         * interval instead of thrashing.
         */
        BOUND_UNREACHABLE,
        /**
         * Replaying after a restart: a checkpoint would slow the replay down, and the sources' rate
         * is the replay's, not the input's, so the bound is not known until the job caught up.
         */
        CATCHING_UP;

        public boolean triggers() {
            return this == AGE_BOUND || this == CHEAPEST_MOMENT || this == STEADY_INTERVAL;
        }
    }

    public Decision {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(checkpointAge, "checkpointAge");
        if ((action == Action.CHECKPOINT) != reason.triggers()) {
            throw new IllegalArgumentException("Action " + action + " does not go with reason " + reason);
        }
    }

    public boolean checkpointNow() {
        return action == Action.CHECKPOINT;
    }

    /** Collects the numbers shared by every decision of one evaluation. */
    static final class Builder {
        private final Duration ageBound;
        private final Duration estimatedRecovery;
        private final Duration checkpointAge;
        private final boolean boundReachable;

        Builder(@Nullable Duration ageBound, @Nullable Duration estimatedRecovery, Duration checkpointAge,
                boolean boundReachable) {
            this.ageBound = ageBound;
            this.estimatedRecovery = estimatedRecovery;
            this.checkpointAge = checkpointAge;
            this.boundReachable = boundReachable;
        }

        Decision build(Action action, Reason reason, String explanation) {
            return new Decision(action, reason, explanation, ageBound, estimatedRecovery, checkpointAge, boundReachable);
        }
    }
}
