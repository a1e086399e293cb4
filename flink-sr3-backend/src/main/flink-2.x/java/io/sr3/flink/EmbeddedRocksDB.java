package io.sr3.flink;

import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.util.TernaryBoolean;

/**
 * Flink 2.x side of the version seam: Flink's RocksDB backend, which lives in
 * {@code org.apache.flink.state.rocksdb} from Flink 2.0 on.
 */
final class EmbeddedRocksDB {

    private EmbeddedRocksDB() {}

    /** Flink's embedded RocksDB backend, configured from {@code config}. */
    static StateBackend create(boolean incremental, ReadableConfig config, ClassLoader classLoader) {
        return new EmbeddedRocksDBStateBackend(TernaryBoolean.fromBoolean(incremental)).configure(config, classLoader);
    }
}
