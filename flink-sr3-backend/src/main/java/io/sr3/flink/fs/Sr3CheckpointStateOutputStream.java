package io.sr3.flink.fs;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.util.function.IntSupplier;

/**
 * Flink's checkpoint state stream on {@code sr3://}, with one difference: a {@link #close} that
 * is not {@link #closeAndGetHandle} (Flink cancelling the checkpoint, when the task fails or is
 * cancelled) abandons the file, without storing it first and deleting it again. That close runs
 * on the task's thread before the task reports its failure, so what it costs delays the restart
 * of the whole failover region.
 *
 * <p>Each stream sees the ring through its own {@link OneFileSystem}, which keeps the one file it
 * creates, so the close can reach that file's {@link Sr3OutputStream} under Flink's stream.
 */
@ThreadSafe
public final class Sr3CheckpointStateOutputStream extends FsCheckpointStreamFactory.FsCheckpointStateOutputStream {

    private final OneFileSystem files;

    /**
     * @param copies the copies each file asks for (see {@link PlannedCopiesFileSystem})
     * @param allowRelativePaths whether handles name the file relative to the checkpoint directory
     *     (exclusive state), as Flink's own stream does
     */
    public static Sr3CheckpointStateOutputStream create(Path basePath, Sr3FileSystem ring, IntSupplier copies,
            int bufferSize, int localStateThreshold, boolean allowRelativePaths) {
        return new Sr3CheckpointStateOutputStream(basePath, new OneFileSystem(ring, copies), bufferSize,
                localStateThreshold, allowRelativePaths);
    }

    private Sr3CheckpointStateOutputStream(Path basePath, OneFileSystem files, int bufferSize, int localStateThreshold,
            boolean allowRelativePaths) {
        super(basePath, files, bufferSize, localStateThreshold, allowRelativePaths);
        this.files = files;
    }

    /**
     * Abandons the file (if one was created and not yet published), then lets Flink's stream close
     * it, whose delete of the file then has nothing to do. The abandon takes no lock, so it also
     * ends a {@code closeAndGetHandle} that waits for slow or unreachable holders: that handle is
     * refused and nothing is published, unless the file's manifest was being stored already (then
     * the handle is returned). Flink's close runs under the stream's lock, after any such call.
     */
    @Override
    public void close() {
        if (!isClosed()) {
            files.abandon();
        }
        synchronized (this) {
            super.close();
        }
    }

    /** The ring as one checkpoint stream sees it: the file it creates can be abandoned. */
    @ThreadSafe
    static final class OneFileSystem extends PlannedCopiesFileSystem {

        @Nullable private volatile Sr3OutputStream created;
        @Nullable private volatile Path createdPath;
        @Nullable private volatile Path abandoned;

        OneFileSystem(Sr3FileSystem ring, IntSupplier copies) {
            super(ring, copies);
        }

        @Override
        public FSDataOutputStream create(Path path, WriteMode overwriteMode) throws IOException {
            FSDataOutputStream stream = super.create(path, overwriteMode);
            if (stream instanceof Sr3OutputStream sr3) {
                createdPath = path; // first: abandon() reads the stream, then its path
                created = sr3;
            }
            return stream;
        }

        void abandon() {
            Sr3OutputStream stream = created;
            if (stream != null) {
                // Before the stream's abandon wakes a waiting closeAndGetHandle, whose failure deletes
                // the path at once: that delete must be answered here, not by the (slow) holders.
                abandoned = createdPath;
                stream.abandon();
            }
        }

        /** An abandoned file was never published: nothing to delete, and no need to ask the ring. */
        @Override
        public boolean delete(Path path, boolean recursive) throws IOException {
            Path gone = abandoned;
            if (gone != null && gone.equals(path)) {
                return false;
            }
            return super.delete(path, recursive);
        }
    }
}
