package io.sr3.flink.fs;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.Path;

/**
 * A file's or directory's status as recorded in its manifest; its replication is, as in HDFS,
 * the copies the file asks for, not the copies that exist now.
 */
record Sr3FileStatus(Manifest manifest, Path path, short replication) implements FileStatus {
    @Override
    public long getLen() {
        return manifest.length();
    }

    @Override
    public long getBlockSize() {
        return manifest.blocks().isEmpty() ? 0 : manifest.blocks().get(0).length();
    }

    @Override
    public short getReplication() {
        return replication;
    }

    @Override
    public long getModificationTime() {
        return manifest.modificationTime();
    }

    @Override
    public long getAccessTime() {
        return 0;
    }

    @Override
    public boolean isDir() {
        return manifest.directory();
    }

    @Override
    public Path getPath() {
        return path;
    }
}
