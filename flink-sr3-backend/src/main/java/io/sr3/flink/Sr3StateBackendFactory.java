package io.sr3.flink;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.StateBackendFactory;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;

/**
 * {@code state.backend.type: io.sr3.flink.Sr3StateBackendFactory} (Flink 2.x), or
 * {@code state.backend: io.sr3.flink.Sr3StateBackendFactory} (Flink 1.20; 1.20 reads both keys).
 *
 * <p>Flink calls this on the JobManager once per job and on TaskManagers for every task, so it
 * only validates and builds objects: no thread, socket or file is touched here.
 */
public final class Sr3StateBackendFactory implements StateBackendFactory<Sr3StateBackend> {

    @Override
    public Sr3StateBackend createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        Sr3Options.offerToLocalRing(config);
        WorkingState workingState = config.get(Sr3Options.WORKING_STATE);
        boolean paced = config.get(Sr3PacingOptions.ENABLED);
        return switch (workingState) {
            case ROCKSDB -> {
                // Incremental by default: the ring then only receives new SST files per checkpoint.
                boolean incremental = config.getOptional(CheckpointingOptions.INCREMENTAL_CHECKPOINTS).orElse(true);
                yield new Sr3StateBackend(workingState, EmbeddedRocksDB.create(incremental, config, classLoader), paced);
            }
            case HEAP -> new Sr3StateBackend(workingState, new HashMapStateBackend().configure(config, classLoader), paced);
        };
    }
}
