package io.sr3.flink;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import io.sr3.flink.fs.Sr3FileSystem;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;

/**
 * The flink-sr3 state backend: Flink's RocksDB or heap backend for the working state, composed
 * (not extended) so that Flink sees the delegate's keyed backend unchanged, with every checkpoint
 * written through the {@code sr3://} ring by {@link Sr3CheckpointStorage}.
 *
 * <p>Users do not construct it: {@code state.backend.type: io.sr3.flink.Sr3StateBackendFactory}
 * ({@code state.backend} on Flink 1.20). The async keyed backend methods, whose signature differs
 * between Flink lines, are in {@link VersionedStateBackend}.
 */
public final class Sr3StateBackend extends VersionedStateBackend {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(Sr3StateBackend.class);

    private final WorkingState workingState;
    private final StateBackend delegate;
    /** {@code sr3.pacing.enabled}: only then do operators get the {@code sr3.pacing} gauges. */
    private final boolean paced;

    Sr3StateBackend(WorkingState workingState, StateBackend delegate) {
        this(workingState, delegate, false);
    }

    Sr3StateBackend(WorkingState workingState, StateBackend delegate, boolean paced) {
        this.workingState = workingState;
        this.delegate = delegate;
        this.paced = paced;
    }

    public WorkingState workingState() {
        return workingState;
    }

    /** The backend that holds the working state. */
    @Override
    public StateBackend delegate() {
        return delegate;
    }

    @Override
    public Sr3StateBackend configure(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        Sr3Options.offerToLocalRing(config);
        if (delegate instanceof ConfigurableStateBackend configurable) {
            return new Sr3StateBackend(workingState, configurable.configure(config, classLoader),
                    config.get(Sr3PacingOptions.ENABLED));
        }
        return new Sr3StateBackend(workingState, delegate, config.get(Sr3PacingOptions.ENABLED));
    }

    @Override
    public String getName() {
        return "Sr3StateBackend(" + workingState.name().toLowerCase() + ")";
    }

    @Override
    public <K> CheckpointableKeyedStateBackend<K> createKeyedStateBackend(KeyedStateBackendParameters<K> parameters)
            throws Exception {
        PlannedCopies copies = Sr3CheckpointStorageAccess.assignOperator(
                parameters.getEnv().getCheckpointStorageAccess(), parameters.getEnv().getJobVertexId().toString());
        RingMetrics.register(parameters.getMetricGroup(), parameters.getJobID().toString(), paced, copies);
        prefetch(StateFiles.readThroughStreams(parameters.getStateHandles()), parameters.getOperatorIdentifier());
        return delegate.createKeyedStateBackend(parameters);
    }

    @Override
    public OperatorStateBackend createOperatorStateBackend(OperatorStateBackendParameters parameters) throws Exception {
        Sr3CheckpointStorageAccess.assignOperator(parameters.getEnv().getCheckpointStorageAccess(),
                parameters.getEnv().getJobVertexId().toString());
        prefetch(StateFiles.readThroughStreams(parameters.getStateHandles()), parameters.getOperatorIdentifier());
        return delegate.createOperatorStateBackend(parameters);
    }

    /**
     * Restores the files Flink is about to read through one restore plan. A failed prefetch is
     * only logged: Flink then reads the files block by block, with replica fallback, and fails
     * there with the precise error if a block is really gone.
     */
    private static void prefetch(List<Path> files, String subtask) {
        if (files.isEmpty()) {
            return;
        }
        try {
            FileSystem fs = FileSystem.get(files.get(0).toUri());
            FileSystem inner = Sr3FileSystem.unwrap(fs);
            if (inner instanceof Sr3FileSystem sr3) {
                sr3.prefetch(files, subtask);
            } else {
                LOG.debug("sr3:// is served by {} here (a plugin class loader?); no prefetch for {}", inner, subtask);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("sr3 restore of {}: prefetch through a restore plan failed ({}); Flink reads the files block by "
                    + "block instead", subtask, e.toString());
        }
    }

    @Override
    public boolean useManagedMemory() {
        return delegate.useManagedMemory();
    }

    @Override
    public boolean supportsNoClaimRestoreMode() {
        return delegate.supportsNoClaimRestoreMode();
    }

    @Override
    public boolean supportsSavepointFormat(SavepointFormatType formatType) {
        return delegate.supportsSavepointFormat(formatType);
    }

    @Override
    public String toString() {
        return getName() + " over " + delegate;
    }
}
