package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;

import javax.annotation.Nullable;

/** The values of {@code sr3.restore.strategy}: let the planner choose, or force one structure. */
public enum RestoreStrategy {
    /** The structure the planner predicts to be fastest. */
    AUTO(null),
    STAR(Structure.STAR),
    LINE(Structure.LINE),
    TREE(Structure.TREE);

    @Nullable private final Structure structure;

    RestoreStrategy(@Nullable Structure structure) {
        this.structure = structure;
    }

    /** The forced structure, or null for {@link #AUTO}. */
    @Nullable
    public Structure forced() {
        return structure;
    }
}
