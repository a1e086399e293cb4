package io.sr3.flink;

import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * Checkpoints on the sr3 ring, savepoints in the durable directory the user configured.
 *
 * <p>Flink's checkpoint metadata can only reference its own state handle classes, so the ring is
 * reached as the {@code sr3://} file system and this class composes Flink's file-system checkpoint
 * storage over an {@code sr3://} checkpoint directory. Savepoints are meant to outlive the
 * cluster, so they stay on {@code execution.checkpointing.savepoint-dir}.
 *
 * <p>Users do not construct it:
 * {@code execution.checkpointing.storage: io.sr3.flink.Sr3CheckpointStorageFactory}.
 */
public final class Sr3CheckpointStorage implements CheckpointStorage {

    private static final long serialVersionUID = 1L;

    private final FileSystemCheckpointStorage delegate;

    Sr3CheckpointStorage(FileSystemCheckpointStorage delegate) {
        this.delegate = delegate;
    }

    /** Where checkpoints go: an {@code sr3://} directory. */
    public Path getCheckpointPath() {
        return delegate.getCheckpointPath();
    }

    /** Where savepoints go by default, or null if none is configured. */
    @Nullable
    public Path getSavepointPath() {
        return delegate.getSavepointPath();
    }

    @Override
    public CompletedCheckpointStorageLocation resolveCheckpoint(String externalPointer) throws IOException {
        return delegate.resolveCheckpoint(externalPointer);
    }

    @Override
    public CheckpointStorageAccess createCheckpointStorage(JobID jobId) throws IOException {
        return delegate.createCheckpointStorage(jobId);
    }

    @Override
    public String toString() {
        return "Sr3CheckpointStorage(checkpoints: " + getCheckpointPath() + ", savepoints: " + getSavepointPath() + ")";
    }
}
