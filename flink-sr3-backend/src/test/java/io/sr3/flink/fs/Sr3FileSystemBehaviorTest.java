package io.sr3.flink.fs;

import io.sr3.flink.node.TestingRing;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemBehaviorTestSuite;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** Flink's own FileSystem contract, against {@code sr3://} on three real ring nodes. */
class Sr3FileSystemBehaviorTest extends FileSystemBehaviorTestSuite {

    @TempDir static java.nio.file.Path storeRoot;

    private static TestingRing ring;

    @BeforeAll
    static void startRing() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), storeRoot);
    }

    @AfterAll
    static void stopRing() {
        ring.close();
    }

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
