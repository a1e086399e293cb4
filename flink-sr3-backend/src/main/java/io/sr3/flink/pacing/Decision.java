package io.sr3.flink.pacing;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;

/**
 * What {@link PacingPolicy} decided, why, and the numbers it decided on.
 *
 * @param reason the rule that decided; {@link Reason#triggers()} says whether to checkpoint now
 * @param explanation one sentence with the numbers, for the log
 * @param ageBound tau_max, the largest checkpoint age that keeps the recovery within the bound;
 *     null when unbounded (no input) or unknown (catching up)
 * @param estimatedRecovery the model's recovery time if a failure struck now; null when infinite or unknown
 * @param checkpointAge age of the state a restore would start from
 * @param boundReachable false when no schedule meets the bound, not even checkpoints back to back
 */
public record Decision(Reason reason, String explanation, @Nullable Duration ageBound,
        @Nullable Duration estimatedRecovery, Duration checkpointAge, boolean boundReachable) {

    /** The rule behind a decision; the first three trigger a checkpoint, the others wait. */
    public enum Reason {
        /** The age would pass tau_max before another checkpoint could complete. */
        AGE_BOUND,
        /** Inside the allowed window, the hottest subtasks have headroom now. */
        CHEAPEST_MOMENT,
        /** Young's interval reached with headroom (or the bound is unreachable). */
        STEADY_INTERVAL,
        /** A checkpoint is running (or was just requested). */
        CHECKPOINT_IN_PROGRESS,
        /** Well inside the bound and before the steady interval or the window. */
        WITHIN_BOUND,
        /** A checkpoint is due but the hottest subtasks are busy: wait for a cheaper moment. */
        WAITING_FOR_HEADROOM,
        /** No schedule meets the bound: pacing at the steady interval instead of back to back. */
        BOUND_UNREACHABLE,
        /** Replaying after a restart: a checkpoint would slow the replay, and the input rate is not known until it ends. */
        CATCHING_UP;

        public boolean triggers() {
            return this == AGE_BOUND || this == CHEAPEST_MOMENT || this == STEADY_INTERVAL;
        }
    }

    public Decision {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(checkpointAge, "checkpointAge");
    }

    public boolean checkpointNow() {
        return reason.triggers();
    }
}
