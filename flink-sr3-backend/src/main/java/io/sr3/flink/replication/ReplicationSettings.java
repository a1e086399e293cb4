package io.sr3.flink.replication;

import java.io.Serializable;
import java.util.Objects;

/**
 * The bounds and the budget the replication policy works within.
 *
 * @param mode uniform or cost-aware
 * @param budget the mean number of copies over all checkpoint bytes (bytes-weighted) the policy
 *     may spend; at least {@code minCopies}
 * @param minCopies the fewest copies of any operator, at least the write quorum
 * @param maxCopies the most copies of any operator
 * @param uniformCopies the replication factor, which uniform mode gives every operator
 */
public record ReplicationSettings(ReplicationMode mode, double budget, int minCopies, int maxCopies,
        int uniformCopies) implements Serializable {

    /** Copies are counted in one byte on the wire, as a manifest's holders are. */
    public static final int MOST_COPIES = 255;

    public ReplicationSettings {
        Objects.requireNonNull(mode, "mode");
        if (minCopies < 1 || minCopies > uniformCopies || uniformCopies > maxCopies || maxCopies > MOST_COPIES) {
            throw new IllegalArgumentException(String.format("Copies must satisfy 1 <= minCopies (%d) <= "
                    + "uniformCopies (%d) <= maxCopies (%d) <= %d", minCopies, uniformCopies, maxCopies, MOST_COPIES));
        }
        if (!(budget >= minCopies) || Double.isInfinite(budget)) {
            throw new IllegalArgumentException(String.format("budget must be finite and >= minCopies (%d), was %s",
                    minCopies, budget));
        }
    }
}
