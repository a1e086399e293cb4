package io.sr3.flink.fs;

import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.TestingRing;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Output streams fill block arrays the node reuses: a large file costs its writer no array per
 * block, and a reused array never changes a block that is still being replicated. Two real nodes,
 * replication factor 2, blocks of 1 MiB.
 */
class BlockArraysTest {

    private static final int BLOCK = TestingRing.SAMPLE_BLOCK;
    private static final int BLOCKS_PER_FILE = 24;

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @Test
    void aLargeFileIsWrittenWithoutANewArrayPerBlockAndEveryFileReadsBackIntact() throws Exception {
        rings.start(2, TestingRing.sampleBlockConfig());
        Path base = new Path("sr3:///block-arrays-test/" + UUID.randomUUID());
        Sr3FileSystem fs = (Sr3FileSystem) base.getFileSystem();
        byte[][] contents = new byte[3][BLOCKS_PER_FILE * BLOCK + 17];
        for (int i = 0; i < contents.length; i++) {
            new Random(i).nextBytes(contents[i]);
        }

        write(fs, new Path(base, "warm-up"), contents[0]); // fills the pool
        long before = allocatedByThisThread();
        write(fs, new Path(base, "measured"), contents[1]);
        long allocated = allocatedByThisThread() - before;
        write(fs, new Path(base, "last"), contents[2]);

        assertThat(allocated).as("bytes the writing thread allocated for a file of %d blocks", BLOCKS_PER_FILE)
                .isLessThan(4L * BLOCK);
        assertThat(read(fs, new Path(base, "warm-up"))).isEqualTo(contents[0]);
        assertThat(read(fs, new Path(base, "measured"))).isEqualTo(contents[1]);
        assertThat(read(fs, new Path(base, "last"))).isEqualTo(contents[2]);
    }

    @Test
    void aPartialBlockIsReplicatedFromItsArrayWithoutACopy() throws Exception {
        rings.start(2, TestingRing.sampleBlockConfig());
        Path base = new Path("sr3:///block-arrays-test/" + UUID.randomUUID());
        Sr3FileSystem fs = (Sr3FileSystem) base.getFileSystem();
        byte[][] contents = new byte[3][2 * BLOCK + BLOCK * 3 / 4];
        for (int i = 0; i < contents.length; i++) {
            new Random(i).nextBytes(contents[i]);
        }

        write(fs, new Path(base, "warm-up"), contents[0]);
        long before = allocatedByThisThread();
        write(fs, new Path(base, "measured"), contents[1]);
        long allocated = allocatedByThisThread() - before;
        Path synced = new Path(base, "synced");
        try (FSDataOutputStream out = fs.create(synced, WriteMode.NO_OVERWRITE)) {
            out.write(contents[2], 0, BLOCK + BLOCK / 2);
            out.sync(); // a partial block in the middle of the file
            out.write(contents[2], BLOCK + BLOCK / 2, contents[2].length - BLOCK - BLOCK / 2);
        }

        // The buffer grows by doubling up to GROWN_BUFFER_MAX before the first block array (about
        // twice that in all); a copy of the last block would add three quarters of a block.
        assertThat(allocated).as("bytes the writing thread allocated for a file ending in three quarters of a block")
                .isLessThan(2L * Sr3OutputStream.GROWN_BUFFER_MAX + 128 * 1024);
        assertThat(read(fs, new Path(base, "measured"))).isEqualTo(contents[1]);
        assertThat(read(fs, synced)).isEqualTo(contents[2]);
    }

    private static void write(Sr3FileSystem fs, Path path, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(path, WriteMode.NO_OVERWRITE)) {
            for (int offset = 0; offset < data.length; offset += 8192) {
                out.write(data, offset, Math.min(8192, data.length - offset));
            }
        }
    }

    private static byte[] read(Sr3FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    private static long allocatedByThisThread() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }
}
