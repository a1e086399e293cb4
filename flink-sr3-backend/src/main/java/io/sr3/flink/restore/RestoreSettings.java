package io.sr3.flink.restore;

import javax.annotation.Nullable;

/**
 * How restores run on this node ({@code sr3.restore.*}).
 *
 * @param forced the structure to use when it can run ({@code sr3.restore.strategy}), or null for
 *     the planner's choice ({@code auto})
 * @param treeFanIn the most children any node of a tree restore receives from
 * @param maxConcurrentFetches blocks in flight at once towards this node
 */
public record RestoreSettings(@Nullable Structure forced, int treeFanIn, int maxConcurrentFetches) {

    public RestoreSettings {
        if (treeFanIn < 2) {
            throw new IllegalArgumentException("treeFanIn must be >= 2, was " + treeFanIn);
        }
        if (maxConcurrentFetches < 1) {
            throw new IllegalArgumentException("maxConcurrentFetches must be >= 1, was " + maxConcurrentFetches);
        }
    }

    /** The option defaults: auto, fan-in 2, 8 blocks in flight. */
    public static RestoreSettings defaults() {
        return new RestoreSettings(null, 2, 8);
    }

    public RestoreSettings withForced(@Nullable Structure structure) {
        return new RestoreSettings(structure, treeFanIn, maxConcurrentFetches);
    }
}
