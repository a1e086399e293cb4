package io.sr3.flink;

import io.sr3.flink.fs.Sr3CheckpointStorageLocation;
import io.sr3.flink.fs.Sr3FileSystem;
import io.sr3.flink.pacing.PacingSettings;
import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.runtime.checkpoint.filemerging.FileMergingSnapshotManager;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStateToolset;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStorageWorkerView;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * Flink's file-system checkpoint access for one job (on the JobManager) or one task (on a
 * TaskManager), plus what flink-sr3 adds there:
 * <ul>
 *   <li>on the JobManager, {@link #initializeBaseLocationsForCheckpoint} starts the job's pacer
 *       and replication planner (only the checkpoint coordinator calls it);
 *   <li>on a TaskManager, once the state backend named the task's operator
 *       ({@link #assignOperator}), every checkpoint file the task creates asks for the copies the
 *       operator's replication plan gives it ({@link PlannedCopies}).
 * </ul>
 * Everything else is Flink's access unchanged.
 */
final class Sr3CheckpointStorageAccess implements CheckpointStorageAccess {

    private final CheckpointStorageAccess delegate;
    private final JobID jobId;
    @Nullable private final PacingSettings pacing;
    @Nullable private final ReplicationSetup replication;
    private final int fileSizeThreshold;
    private final int writeBufferSize;
    /** The plan of the task's operator; null until the state backend names it, or with uniform replication. */
    @Nullable private volatile PlannedCopies copies;

    Sr3CheckpointStorageAccess(CheckpointStorageAccess delegate, JobID jobId, @Nullable PacingSettings pacing,
            @Nullable ReplicationSetup replication, int fileSizeThreshold, int writeBufferSize) {
        this.delegate = delegate;
        this.jobId = jobId;
        this.pacing = pacing;
        this.replication = replication;
        this.fileSizeThreshold = fileSizeThreshold;
        this.writeBufferSize = writeBufferSize;
    }

    /**
     * Names the operator (job vertex) whose state this task's checkpoints hold; called by the
     * state backend when it creates the operator's keyed or operator state backend. A task is one
     * operator chain, so one vertex: the first name sticks.
     *
     * @return the operator's copies, or null when replication is uniform
     */
    @Nullable
    static PlannedCopies assignOperator(@Nullable CheckpointStorageAccess access, String vertexId) {
        if (!(access instanceof Sr3CheckpointStorageAccess sr3) || sr3.replication == null) {
            return null;
        }
        synchronized (sr3) {
            if (sr3.copies == null) {
                sr3.copies = new PlannedCopies(sr3.jobId.toString(), vertexId);
            }
            return sr3.copies;
        }
    }

    @Override
    public void initializeBaseLocationsForCheckpoint() throws IOException {
        delegate.initializeBaseLocationsForCheckpoint();
        if (pacing != null) {
            CheckpointPacers.startIfAbsent(jobId.toString(), pacing);
        }
        if (replication != null) {
            ReplicationPlanners.startIfAbsent(jobId.toString(), replication);
        }
    }

    /**
     * Flink's location, as an {@link Sr3CheckpointStorageLocation} when it is on this class
     * loader's {@code sr3://}: its files get the operator's planned copies (the replication factor
     * until the state backend named the operator, or with uniform replication), and a cancelled
     * checkpoint's streams abandon their files.
     */
    @Override
    public CheckpointStreamFactory resolveCheckpointStorageLocation(long checkpointId,
            CheckpointStorageLocationReference reference) throws IOException {
        CheckpointStreamFactory located = delegate.resolveCheckpointStorageLocation(checkpointId, reference);
        if (!(located instanceof FsCheckpointStorageLocation location)) {
            return located;
        }
        FileSystem fs = Sr3FileSystem.unwrap(location.getCheckpointDirectory().getFileSystem());
        if (!(fs instanceof Sr3FileSystem ring)) {
            return located; // a savepoint elsewhere, or sr3:// from another class loader
        }
        return new Sr3CheckpointStorageLocation(ring, this::plannedCopies, location.getCheckpointDirectory(),
                location.getSharedStateDirectory(), location.getTaskOwnedStateDirectory(),
                location.getLocationReference(), fileSizeThreshold, writeBufferSize);
    }

    private int plannedCopies() {
        PlannedCopies planned = copies;
        return planned == null ? 0 : planned.copies(); // 0: the replication factor
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
