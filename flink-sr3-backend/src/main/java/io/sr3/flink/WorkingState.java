package io.sr3.flink;

/** Where a running job keeps its keyed state between checkpoints ({@code sr3.working-state}). */
public enum WorkingState {
    /** Embedded RocksDB on local disk with incremental checkpoints: large state. */
    ROCKSDB,
    /** Objects on the JVM heap: small state, fastest access. */
    HEAP
}
