package io.sr3.flink.fs;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingRole;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import java.net.URI;

/**
 * Registers the {@code sr3://} scheme with Flink (listed in
 * {@code META-INF/services/org.apache.flink.core.fs.FileSystemFactory}).
 *
 * <p>Flink configures it with the process configuration; when that holds {@code sr3.*} keys they
 * become the configuration of this process's ring node ({@code io.sr3.flink.node.LocalRing}). Creating a file system starts nothing: the
 * node starts on the first file operation, except in a process whose configuration names
 * {@code sr3.ring.seeds} and has the {@code storage} role (a TaskManager of a real cluster): its
 * node starts in the background as soon as Flink initializes its file systems, so that it is a
 * member of the ring before the JobManager writes the first checkpoint directory; a failed start
 * is retried ({@link StorageNodeStarter}).
 */
public final class Sr3FileSystemFactory implements FileSystemFactory {

    public static final String SCHEME = "sr3";

    @Override
    public String getScheme() {
        return SCHEME;
    }

    @Override
    public void configure(Configuration config) {
        NodeConfig nodeConfig = Sr3Options.offerToLocalRing(config);
        if (Sr3Options.hasSr3Keys(config) && nodeConfig.role() == RingRole.STORAGE && !nodeConfig.seeds().isEmpty()) {
            StorageNodeStarter.begin(LocalRing::current);
        }
    }

    @Override
    public FileSystem create(URI fsUri) {
        return new Sr3FileSystem(fsUri);
    }
}
