package io.sr3.flink.fs;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.ICloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.PathsCopyingFileSystem;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Flink 2.x side of the version seam: {@link Sr3FileSystem} as a {@link PathsCopyingFileSystem},
 * so that RocksDB's restore hands it all files of a subtask at once ({@code canCopyPaths} /
 * {@code copyFiles}) and the ring restores them through one restore plan.
 */
abstract class VersionedFileSystem extends FileSystem implements PathsCopyingFileSystem {

    /** See {@link Sr3FileSystem#copyToLocalFiles}. */
    abstract void copyToLocalFiles(List<Path> sources, List<java.nio.file.Path> destinations,
            FileRestore.CloseableRegistrar abortRegistrar) throws IOException;

    /**
     * From the ring to the local disk: RocksDB's restore asks this for every file of a subtask at
     * once (its destination here is a bare file name, so only the source is checked).
     */
    @Override
    public boolean canCopyPaths(Path source, Path destination) {
        return Sr3FileSystem.copiesToLocal(source, destination);
    }

    @Override
    public void copyFiles(List<CopyRequest> requests, ICloseableRegistry closeableRegistry) throws IOException {
        List<Path> sources = new ArrayList<>(requests.size());
        List<java.nio.file.Path> destinations = new ArrayList<>(requests.size());
        for (CopyRequest request : requests) {
            sources.add(request.getSource());
            destinations.add(java.nio.file.Paths.get(request.getDestination().toUri()));
        }
        copyToLocalFiles(sources, destinations, new FileRestore.CloseableRegistrar() {
            @Override
            public void register(Closeable closeable) throws IOException {
                closeableRegistry.registerCloseable(closeable);
            }

            @Override
            public void unregister(Closeable closeable) {
                closeableRegistry.unregisterCloseable(closeable);
            }
        });
    }
}
