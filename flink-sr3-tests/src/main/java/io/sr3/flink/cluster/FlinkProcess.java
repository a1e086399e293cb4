package io.sr3.flink.cluster;

import javax.annotation.Nullable;

import java.nio.file.Path;

/** One JVM of a {@link ProcessCluster}: its name, process handle and directory. */
public final class FlinkProcess {

    private final String name;
    private final Process process;
    private final Path dir;
    @Nullable private final String ringAddress;

    FlinkProcess(String name, Process process, Path dir, @Nullable String ringAddress) {
        this.name = name;
        this.process = process;
        this.dir = dir;
        this.ringAddress = ringAddress;
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** {@code host:port} of this TaskManager's ring node; null for the JobManager or without sr3. */
    @Nullable
    public String ringAddress() {
        return ringAddress;
    }

    /** Where its {@code config.yaml}, log, stdout/stderr, {@code tmp/} and (TaskManagers) {@code store/} are. */
    public Path directory() {
        return dir;
    }

    Process process() {
        return process;
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}
