package io.sr3.flink.fs;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.transport.BlockBuffers;
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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Output streams fill the node's pooled direct block buffers: a large file costs its writer no
 * array per block, every buffer goes back to the pool (or, after a failed write, is forgotten by
 * it), and a reused buffer never changes a block that is still being replicated. Two real nodes,
 * replication factor 2, blocks of 1 MiB.
 */
class OutputBlockBuffersTest {

    private static final int BLOCK = TestingRing.SAMPLE_BLOCK;
    private static final int BLOCKS_PER_FILE = 24;

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @Test
    void aLargeFileIsWrittenFromPooledDirectBuffersThatAllGoBackAndEveryFileReadsBackIntact() throws Exception {
        TestingRing ring = rings.start(2, TestingRing.sampleBlockConfig());
        BlockBuffers pool = ring.node(0).blockBuffers();
        Path base = new Path("sr3:///output-block-buffers-test/" + UUID.randomUUID());
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
                .isLessThan(BLOCK);
        assertThat(pool.created()).as("direct buffers the writer's node created").isPositive();
        // Every stream closed; a block read by the node's own maintenance may still hold one for a moment.
        Deadline.poll("every buffer back in the pool", TestingRing.AWAIT_TIMEOUT, () -> pool.lent() == 0,
                () -> pool.lent() + " still lent");
        assertThat(pool.heapFallbacks()).as("blocks written from heap buffers").isZero();
        assertThat(read(fs, new Path(base, "warm-up"))).isEqualTo(contents[0]);
        assertThat(read(fs, new Path(base, "measured"))).isEqualTo(contents[1]);
        assertThat(read(fs, new Path(base, "last"))).isEqualTo(contents[2]);
    }

    @Test
    void aPartialBlockIsReplicatedFromItsBufferWithoutACopy() throws Exception {
        rings.start(2, TestingRing.sampleBlockConfig());
        Path base = new Path("sr3:///output-block-buffers-test/" + UUID.randomUUID());
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

    @Test
    void theBuffersOfAFailedWriteDoNotShrinkThePool() throws Exception {
        // Stores smaller than a block: every copy of every block is refused after its transfer started.
        NodeConfig config = TestingRing.sampleBlockConfig();
        TestingRing ring = rings.start(2, config.withStoreLimits(BLOCK / 2, config.orphanGracePeriod()));
        RingNode writer = ring.node(0);
        Path base = new Path("sr3:///output-block-buffers-test/" + UUID.randomUUID());
        Sr3FileSystem fs = (Sr3FileSystem) base.getFileSystem();
        byte[] content = new byte[3 * BLOCK];

        assertThatThrownBy(() -> write(fs, new Path(base, "refused"), content)).isInstanceOf(IOException.class);

        BlockBuffers pool = writer.blockBuffers();
        // The close fails at the first failed block; the writes after it settle on their own.
        Deadline.poll("every buffer of the failed stream back or forgotten", TestingRing.AWAIT_TIMEOUT,
                () -> pool.lent() == 0, () -> pool.lent() + " still lent");
        for (int i = 0; i < config.restore().blockBuffers(); i++) {
            assertThat(pool.acquire(BLOCK).isDirect()).as("buffer %d the pool lends after the failure is direct", i)
                    .isTrue();
        }
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
