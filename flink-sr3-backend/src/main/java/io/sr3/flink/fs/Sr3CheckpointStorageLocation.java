package io.sr3.flink.fs;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation;

import java.util.function.IntSupplier;

/**
 * Flink's checkpoint location on {@code sr3://} as a task writes to it: its files ask for the
 * copies of their operator's replication plan ({@link PlannedCopiesFileSystem}), and its state
 * streams are {@link Sr3CheckpointStateOutputStream}s, which abandon a cancelled file instead of
 * storing and deleting it.
 */
public final class Sr3CheckpointStorageLocation extends FsCheckpointStorageLocation {

    private final Sr3FileSystem ring;
    private final IntSupplier copies;
    private final int fileStateThreshold;
    private final int writeBufferSize;

    public Sr3CheckpointStorageLocation(Sr3FileSystem ring, IntSupplier copies, Path checkpointDirectory,
            Path sharedStateDirectory, Path taskOwnedStateDirectory, CheckpointStorageLocationReference reference,
            int fileStateThreshold, int writeBufferSize) {
        super(new PlannedCopiesFileSystem(ring, copies), checkpointDirectory, sharedStateDirectory,
                taskOwnedStateDirectory, reference, fileStateThreshold, writeBufferSize);
        this.ring = ring;
        this.copies = copies;
        this.fileStateThreshold = fileStateThreshold;
        this.writeBufferSize = writeBufferSize;
    }

    /** As Flink's: exclusive state named relative to the checkpoint directory, shared state by its full path. */
    @Override
    public Sr3CheckpointStateOutputStream createCheckpointStateOutputStream(CheckpointedStateScope scope) {
        Path target = scope == CheckpointedStateScope.EXCLUSIVE ? getCheckpointDirectory() : getSharedStateDirectory();
        return Sr3CheckpointStateOutputStream.create(target, ring, copies,
                Math.max(writeBufferSize, fileStateThreshold), fileStateThreshold,
                scope == CheckpointedStateScope.EXCLUSIVE);
    }
}
