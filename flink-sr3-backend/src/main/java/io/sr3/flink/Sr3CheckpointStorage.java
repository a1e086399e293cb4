package io.sr3.flink;

import io.sr3.flink.pacing.PacingSettings;
import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.filemerging.FileMergingSnapshotManager;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStateToolset;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStorageWorkerView;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
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
 * checkpointing is configured. TaskManagers get the same wrapper, which only delegates.
 *
 * <p>Users do not construct it:
 * {@code execution.checkpointing.storage: io.sr3.flink.Sr3CheckpointStorageFactory}.
 */
public final class Sr3CheckpointStorage implements CheckpointStorage {

    private static final long serialVersionUID = 2L;

    private final FileSystemCheckpointStorage delegate;
    @Nullable
    private final PacingSettings pacing;

    Sr3CheckpointStorage(FileSystemCheckpointStorage delegate) {
        this(delegate, null);
    }

    Sr3CheckpointStorage(FileSystemCheckpointStorage delegate, @Nullable PacingSettings pacing) {
        this.delegate = delegate;
        this.pacing = pacing;
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

    @Override
    public CheckpointStorageAccess createCheckpointStorage(JobID jobId) throws IOException {
        CheckpointStorageAccess access = delegate.createCheckpointStorage(jobId);
        return pacing == null ? access : new PacedAccess(access, jobId, pacing);
    }

    @Override
    public String toString() {
        return "Sr3CheckpointStorage(checkpoints: " + getCheckpointPath() + ", savepoints: " + getSavepointPath()
                + (pacing == null ? "" : ", paced: max recovery time " + pacing.maxRecoveryTime()) + ")";
    }

    /** Flink's access, unchanged, plus the start of the job's pacer on the JobManager. */
    private static final class PacedAccess implements CheckpointStorageAccess {

        private final CheckpointStorageAccess delegate;
        private final JobID jobId;
        private final PacingSettings pacing;

        PacedAccess(CheckpointStorageAccess delegate, JobID jobId, PacingSettings pacing) {
            this.delegate = delegate;
            this.jobId = jobId;
            this.pacing = pacing;
        }

        @Override
        public void initializeBaseLocationsForCheckpoint() throws IOException {
            delegate.initializeBaseLocationsForCheckpoint();
            CheckpointPacers.startIfAbsent(jobId.toString(), pacing);
        }

        @Override
        public boolean supportsHighlyAvailableStorage() {
            return delegate.supportsHighlyAvailableStorage();
        }

        @Override
        public boolean hasDefaultSavepointLocation() {
            return delegate.hasDefaultSavepointLocation();
        }

        @Override
        public CompletedCheckpointStorageLocation resolveCheckpoint(String externalPointer) throws IOException {
            return delegate.resolveCheckpoint(externalPointer);
        }

        @Override
        public CheckpointStorageLocation initializeLocationForCheckpoint(long checkpointId) throws IOException {
            return delegate.initializeLocationForCheckpoint(checkpointId);
        }

        @Override
        public CheckpointStorageLocation initializeLocationForSavepoint(long checkpointId,
                @Nullable String externalLocationPointer) throws IOException {
            return delegate.initializeLocationForSavepoint(checkpointId, externalLocationPointer);
        }

        @Override
        public CheckpointStreamFactory resolveCheckpointStorageLocation(long checkpointId,
                CheckpointStorageLocationReference reference) throws IOException {
            return delegate.resolveCheckpointStorageLocation(checkpointId, reference);
        }

        @Override
        public CheckpointStateOutputStream createTaskOwnedStateStream() throws IOException {
            return delegate.createTaskOwnedStateStream();
        }

        @Override
        public CheckpointStateToolset createTaskOwnedCheckpointStateToolset() {
            return delegate.createTaskOwnedCheckpointStateToolset();
        }

        @Override
        public CheckpointStorageWorkerView toFileMergingStorage(FileMergingSnapshotManager mergingSnapshotManager,
                Environment environment) throws IOException {
            return delegate.toFileMergingStorage(mergingSnapshotManager, environment);
        }
    }
}
