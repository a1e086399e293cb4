package io.sr3.flink.fs;

import io.sr3.flink.Sr3Options;
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
 * node starts on the first file operation.
 */
public final class Sr3FileSystemFactory implements FileSystemFactory {

    public static final String SCHEME = "sr3";

    @Override
    public String getScheme() {
        return SCHEME;
    }

    @Override
    public void configure(Configuration config) {
        Sr3Options.offerToLocalRing(config);
    }

    @Override
    public FileSystem create(URI fsUri) {
        return new Sr3FileSystem(fsUri);
    }
}
