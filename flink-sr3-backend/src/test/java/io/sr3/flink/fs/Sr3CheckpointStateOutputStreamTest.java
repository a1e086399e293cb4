package io.sr3.flink.fs;

import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink cancels a checkpoint by closing its state streams: on sr3 such a stream abandons its file
 * (nothing published, not even the tombstone a delete leaves, and its blocks deleted), while a
 * stream that handed out its handle keeps the file. Real ring of 3 nodes on loopback, rf 2.
 */
class Sr3CheckpointStateOutputStreamTest {

    private static final int BLOCK = TestingRing.testConfig().blockSize();

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @Test
    void aCancelledStreamPublishesNothingAndItsBlocksAreDeleted() throws Exception {
        rings.start(3, TestingRing.testConfig());
        Sr3FileSystem fs = (Sr3FileSystem) new Path("sr3:///").getFileSystem();
        Path base = new Path("sr3:///cancel-test/" + UUID.randomUUID());
        fs.mkdirs(base); // as Flink's checkpoint directories are before their streams write
        Sr3CheckpointStateOutputStream stream = Sr3CheckpointStateOutputStream.create(base, fs, () -> 0, 4096, 1024, false);
        stream.write(bytes(2 * BLOCK + 99)); // beyond the in-memory threshold: a file with three blocks

        stream.close();

        assertThat(stream.isClosed()).isTrue();
        assertThat(fs.listStatus(base)).as("files under %s", base).isNullOrEmpty();
        assertThat(keysInStores(NamespaceKeys.childrenPrefix(base.toUri().getPath())))
                .as("manifests of files under %s in any store, tombstones included", base).isZero();
        Deadline.poll("the abandoned file's blocks deleted from every store", Duration.ofSeconds(10),
                () -> blocksInStores() == 0, () -> blocksInStores() + " block(s) left");
    }

    @Test
    void aStreamClosedAfterItsHandleKeepsItsFile() throws Exception {
        rings.start(3, TestingRing.testConfig());
        Sr3FileSystem fs = (Sr3FileSystem) new Path("sr3:///").getFileSystem();
        Path base = new Path("sr3:///kept-test/" + UUID.randomUUID());
        Sr3CheckpointStateOutputStream stream = Sr3CheckpointStateOutputStream.create(base, fs, () -> 0, 4096, 1024, false);
        byte[] data = bytes(BLOCK + 7);
        stream.write(data);

        StreamStateHandle handle = stream.closeAndGetHandle();
        stream.close();

        Path file = ((FileStateHandle) handle).getFilePath();
        byte[] read = new byte[data.length];
        try (FSDataInputStream in = fs.open(file)) {
            int n = 0;
            while (n < read.length) {
                n += in.read(read, n, read.length - n);
            }
        }
        assertThat(read).isEqualTo(data);
    }

    private int keysInStores(String prefix) throws IOException {
        int keys = 0;
        for (RingNode node : rings.ring().nodes()) {
            keys += node.store().keys(prefix).size();
        }
        return keys;
    }

    private int blocksInStores() {
        try {
            return keysInStores("b-");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static byte[] bytes(int length) {
        byte[] data = new byte[length];
        new Random(length).nextBytes(data);
        return data;
    }
}
