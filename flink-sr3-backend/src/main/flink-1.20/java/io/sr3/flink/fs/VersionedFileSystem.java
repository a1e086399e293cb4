package io.sr3.flink.fs;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.util.List;

/**
 * Flink 1.20 side of the version seam: {@link Sr3FileSystem} as a plain {@link FileSystem}.
 *
 * <p>Flink 1.20 has no {@code PathsCopyingFileSystem} (the bulk-copy hook arrived in 2.0), so
 * RocksDB's restore downloads each file itself through {@link FileSystem#open} on its own thread
 * pool ({@code state.backend.rocksdb.checkpoint.transfer.thread.num}): every block is still
 * verified and read with replica fallback, but without one restore plan across the files, and
 * {@link Sr3FileSystem#copyToLocalFiles} is not called by Flink. 1.20 also still requires
 * {@link #getKind()}, which 2.0 removed.
 */
abstract class VersionedFileSystem extends FileSystem {

    /** See {@link Sr3FileSystem#copyToLocalFiles}; no Flink 1.20 code path calls it. */
    abstract void copyToLocalFiles(List<Path> sources, List<java.nio.file.Path> destinations,
            FileRestore.CloseableRegistrar abortRegistrar) throws IOException;

    @Override
    public FileSystemKind getKind() {
        return FileSystemKind.FILE_SYSTEM;
    }
}
