package io.sr3.flink.node;

/**
 * How fragments travel from their holders to the recovering node (SR3's three structures): the
 * shapes of relay routes ({@link RingNode#relay}) a restore plan chooses from.
 */
public enum Structure {
    /** Every holder sends straight to the recovering node, in parallel. */
    STAR,
    /** Holders form a chain; each forwards what it received plus its own blocks; the last delivers. */
    LINE,
    /** Holders form a tree of bounded fan-in rooted at the recovering node; inner nodes forward upward. */
    TREE
}
