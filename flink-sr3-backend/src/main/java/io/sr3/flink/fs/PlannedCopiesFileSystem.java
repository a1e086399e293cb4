package io.sr3.flink.fs;

import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.net.URI;
import java.util.function.IntSupplier;

/**
 * The {@code sr3://} file system as one operator's checkpoint streams see it: every file it
 * creates asks for the copies the operator's replication plan gives it at that moment (read from
 * {@code copies}, 0 for the replication factor). Files created earlier keep what they were given.
 * Everything but {@link #create} is the ring's file system unchanged.
 */
public class PlannedCopiesFileSystem extends FileSystem {

    private final Sr3FileSystem ring;
    private final IntSupplier copies;

    public PlannedCopiesFileSystem(Sr3FileSystem ring, IntSupplier copies) {
        this.ring = ring;
        this.copies = copies;
    }

    @Override
    public FSDataOutputStream create(Path path, WriteMode overwriteMode) throws IOException {
        return ring.create(path, overwriteMode, copies.getAsInt());
    }

    @Override
    public Path getWorkingDirectory() {
        return ring.getWorkingDirectory();
    }

    @Override
    public Path getHomeDirectory() {
        return ring.getHomeDirectory();
    }

    @Override
    public URI getUri() {
        return ring.getUri();
    }

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
        return ring.getFileStatus(path);
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len) throws IOException {
        return ring.getFileBlockLocations(file, start, len);
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
        return ring.open(path, bufferSize);
    }

    @Override
    public FSDataInputStream open(Path path) throws IOException {
        return ring.open(path);
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
        return ring.listStatus(path);
    }

    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        return ring.delete(path, recursive);
    }

    @Override
    public boolean mkdirs(Path path) throws IOException {
        return ring.mkdirs(path);
    }

    @Override
    public boolean rename(Path source, Path destination) throws IOException {
        return ring.rename(source, destination);
    }

    @Override
    public boolean isDistributedFS() {
        return ring.isDistributedFS();
    }

    /** Flink 1.20 requires it (2.0 removed it from {@link FileSystem}); the ring is a file system. */
    public FileSystemKind getKind() {
        return FileSystemKind.FILE_SYSTEM;
    }

    @Override
    public String toString() {
        return "PlannedCopiesFileSystem(" + ring.getUri() + ")";
    }
}
