package io.sr3.flink.fs;

import io.sr3.flink.node.TestingRingExtension;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemBehaviorTestSuite;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** Flink's own FileSystem contract, against {@code sr3://} on three real ring nodes. */
class Sr3FileSystemBehaviorTest extends FileSystemBehaviorTestSuite {

    /** The suite must have written through the ring: its files are manifests and blocks on it. */
    @RegisterExtension
    static final TestingRingExtension RING = new TestingRingExtension(
            ring -> assertThat(ring.node(0).metrics().bytesWritten.get()).isPositive());

    @Override
    protected FileSystem getFileSystem() throws Exception {
        return getBasePath().getFileSystem();
    }

    @Override
    protected Path getBasePath() {
        return new Path("sr3:///behavior");
    }

    @Override
    protected FileSystemKind getFileSystemKind() {
        return FileSystemKind.FILE_SYSTEM;
    }
}
