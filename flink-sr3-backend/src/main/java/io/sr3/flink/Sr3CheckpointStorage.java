package io.sr3.flink;

import io.sr3.flink.pacing.PacingSettings;
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
 * <p>With {@code sr3.pacing.enabled: true} it also starts the job's checkpoint pacer
 * ({@link CheckpointPacers}) in the JobManager: the per-job access it creates
 * starts the pacer from {@code initializeBaseLocationsForCheckpoint()}, which only the
 * JobManager's checkpoint coordinator calls, once per execution graph and only when periodic
 * checkpointing is configured. With {@code sr3.replication.mode: cost-aware} the same call starts
 * the job's replication planner, and on TaskManagers each operator's checkpoint files ask for the
 * copies its plan gives it (see {@link Sr3CheckpointStorageAccess}).
 *
 * <p>Users do not construct it:
 * {@code execution.checkpointing.storage: io.sr3.flink.Sr3CheckpointStorageFactory}.
 */
public final class Sr3CheckpointStorage implements CheckpointStorage {

    private static final long serialVersionUID = 2L;

    private final FileSystemCheckpointStorage delegate;
    @Nullable
    private final PacingSettings pacing;
    @Nullable
    private final ReplicationSetup replication;

    Sr3CheckpointStorage(FileSystemCheckpointStorage delegate) {
        this(delegate, null, null);
    }

    Sr3CheckpointStorage(FileSystemCheckpointStorage delegate, @Nullable PacingSettings pacing) {
        this(delegate, pacing, null);
    }

    /**
     * @param replication how the JobManager plans each operator's copies, or null with
     *     {@code sr3.replication.mode: uniform}
     */
    Sr3CheckpointStorage(FileSystemCheckpointStorage delegate, @Nullable PacingSettings pacing,
            @Nullable ReplicationSetup replication) {
        this.delegate = delegate;
        this.pacing = pacing;
        this.replication = replication;
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

    /** The pacer's settings, or null when pacing is off. */
    @Nullable
    public PacingSettings pacingSettings() {
        return pacing;
    }

    @Override
    public CompletedCheckpointStorageLocation resolveCheckpoint(String externalPointer) throws IOException {
        return delegate.resolveCheckpoint(externalPointer);
    }

    /** How operators' copies are planned, or null when every file gets the replication factor. */
    @Nullable
    public ReplicationSetup replicationSetup() {
        return replication;
    }

    @Override
    public CheckpointStorageAccess createCheckpointStorage(JobID jobId) throws IOException {
        CheckpointStorageAccess access = delegate.createCheckpointStorage(jobId);
        if (pacing == null && replication == null) {
            return access;
        }
        return new Sr3CheckpointStorageAccess(access, jobId, pacing, replication, delegate.getMinFileSizeThreshold(),
                delegate.getWriteBufferSize());
    }

    @Override
    public String toString() {
        return "Sr3CheckpointStorage(checkpoints: " + getCheckpointPath() + ", savepoints: " + getSavepointPath()
                + (pacing == null ? "" : ", paced: max recovery time " + pacing.maxRecoveryTime())
                + (replication == null ? "" : ", cost-aware replication: budget " + replication.settings().budget())
                + ")";
    }
}
