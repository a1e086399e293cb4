package io.sr3.flink;

import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.contrib.streaming.state.EmbeddedRocksDBStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.util.TernaryBoolean;

/**
 * Flink 1.20 side of the version seam: Flink's RocksDB backend, which lives in
 * {@code org.apache.flink.contrib.streaming.state} in Flink 1.x.
 */
final class EmbeddedRocksDB {

    private EmbeddedRocksDB() {}

    /** Flink's embedded RocksDB backend, configured from {@code config}. */
    static StateBackend create(boolean incremental, ReadableConfig config, ClassLoader classLoader) {
        return new EmbeddedRocksDBStateBackend(TernaryBoolean.fromBoolean(incremental)).configure(config, classLoader);
    }
}
