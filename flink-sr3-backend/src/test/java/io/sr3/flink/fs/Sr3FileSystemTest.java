package io.sr3.flink.fs;

import io.sr3.flink.node.BlockUnavailableException;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What {@code sr3://} adds to the file-system contract: blocks, replicas, fallback, atomic visibility. */
class Sr3FileSystemTest {

    private static final int BLOCK = TestingRing.testConfig().blockSize();

    @TempDir java.nio.file.Path root;

    private TestingRing ring;
    private FileSystem fs;
    private Path base;

    @BeforeEach
    void start() throws IOException {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
        base = new Path("sr3:///fs-test/" + UUID.randomUUID());
        fs = base.getFileSystem();
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    private static byte[] randomBytes(int size) {
        byte[] bytes = new byte[size];
        new Random(size).nextBytes(bytes);
        return bytes;
    }

    private void write(Path path, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(path, WriteMode.NO_OVERWRITE)) {
            out.write(data, 0, data.length / 2);
            for (int i = data.length / 2; i < data.length; i++) {
                out.write(data[i]);
            }
            assertThat(out.getPos()).isEqualTo(data.length);
        }
    }

    private byte[] read(Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    /**
     * Flink interrupts the thread of a cancelled checkpoint upload, before or while close() waits
     * for the ring. Either way the close fails and leaves neither the file nor its blocks: a
     * manifest whose write had started still lands a moment later, and with its blocks discarded
     * it would be a file that can be neither read nor repaired, so it is deleted once its write
     * settled. Here the thread is interrupted before close(), which then fails whatever has
     * already landed (it used to depend on whether the manifest write was still pending when
     * close() asked, and this test failed in CI when it was not).
     */
    @Test
    void anInterruptedCloseLeavesNeitherTheFileNorItsBlocks() throws Exception {
        fs.mkdirs(base);
        long storedBefore = ring.nodes().stream().mapToLong(n -> n.store().bytesStored()).sum();
        Path file = new Path(base, "interrupted");
        byte[] data = randomBytes(BLOCK * 2 + 10);
        FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE);
        out.write(data, 0, data.length);
        out.sync(); // every block is stored: close() has only the manifest left to wait for

        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(out::close).isInstanceOf(IOException.class)
                    .hasCauseInstanceOf(java.io.InterruptedIOException.class)
                    .hasMessageContaining("Could not write");
        } finally {
            Thread.interrupted();
        }

        Deadline.poll("the interrupted file's manifest and blocks to be gone from every node", TestingRing.AWAIT_TIMEOUT, () -> {
            try {
                return !fs.exists(file)
                        && ring.nodes().stream().mapToLong(n -> n.store().bytesStored()).sum() == storedBefore;
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    /**
     * Flink cancels a checkpoint by closing its stream from the task's cleanup thread while the
     * snapshot thread may still be writing. The close must publish a file that holds exactly the
     * bytes its manifest counts (a prefix of what was written), and the writer must get an
     * IOException, never a broken file or a runtime exception.
     */
    @Test
    void aCloseFromAnotherThreadWhileWritingPublishesAConsistentFile() throws Exception {
        byte[] data = randomBytes(BLOCK * 3);
        int chunk = 997; // not a divisor of the block size: blocks fill in the middle of a write
        for (int attempt = 0; attempt < 20; attempt++) {
            Path file = new Path(base, "cancelled-" + attempt);
            FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE);
            java.util.concurrent.atomic.AtomicLong written = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.CompletableFuture<Throwable> writer = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    for (int offset = 0; offset < data.length; offset += chunk) {
                        out.write(data, offset, Math.min(chunk, data.length - offset));
                        written.set(offset);
                    }
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            });
            long closeAfter = BLOCK / 2 + (long) attempt * BLOCK / 8;
            Deadline.poll("the writer to get going", TestingRing.AWAIT_TIMEOUT, () -> written.get() >= closeAfter || writer.isDone());
            try {
                out.close();
            } catch (IOException e) {
                // a failed close publishes nothing; checked below
            }
            Throwable writeError = writer.get(30, java.util.concurrent.TimeUnit.SECONDS);
            if (writeError != null) {
                assertThat(writeError).as("what the writer gets after the close").isInstanceOf(IOException.class)
                        .hasMessageContaining("closed");
            }
            if (fs.exists(file)) {
                byte[] stored = read(file);
                assertThat(fs.getFileStatus(file).getLen()).isEqualTo(stored.length);
                assertThat(stored).as("attempt %d", attempt).isEqualTo(Arrays.copyOf(data, stored.length));
            }
        }
    }

    /**
     * Flink interrupts a cancelled snapshot's thread, which may be waiting for a free slot to send
     * a full block; the bytes of that block must stay in the stream, or a later close publishes a
     * manifest that counts bytes no block holds (seen in the pacing benchmark).
     */
    @Test
    void aWriteInterruptedWhileWaitingToSendABlockKeepsItsBytes() throws Exception {
        byte[] data = randomBytes(BLOCK * 2);
        Path file = new Path(base, "interrupted-write");
        FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE);
        out.write(data, 0, BLOCK / 2);
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> out.write(data, BLOCK / 2, BLOCK))
                    .isInstanceOf(java.io.InterruptedIOException.class).hasMessageContaining("interrupted-write");
        } finally {
            Thread.interrupted();
        }
        long kept = out.getPos();
        out.close();

        byte[] stored = read(file);
        assertThat(stored).hasSize((int) kept);
        assertThat(stored).isEqualTo(Arrays.copyOf(data, (int) kept));
    }

    @Test
    void multiBlockFileRoundTripsWithSeek() throws IOException {
        byte[] data = randomBytes(BLOCK * 5 + 123);
        Path file = new Path(base, "state");
        write(file, data);
        assertThat(read(file)).isEqualTo(data);
        FileStatus status = fs.getFileStatus(file);
        assertThat(status.getLen()).isEqualTo(data.length);
        assertThat(status.getReplication()).isEqualTo((short) 2);
        assertThat(fs.getFileBlockLocations(status, 0, data.length)).hasSize(6);
        try (FSDataInputStream in = fs.open(file)) {
            in.seek(BLOCK * 3L + 7);
            byte[] chunk = new byte[BLOCK];
            int n = in.read(chunk);
            assertThat(Arrays.copyOf(chunk, n)).isEqualTo(Arrays.copyOfRange(data, BLOCK * 3 + 7, BLOCK * 3 + 7 + n));
            in.seek(0);
            assertThat(in.read()).isEqualTo(data[0] & 0xFF);
        }
    }

    /**
     * Reading a file front to back, the next block is fetched while the reader works on the
     * current one: after one byte of block 0 the ring has served blocks 0 and 1. The bytes stay
     * exact across the read-ahead, a seek back and a read to the end.
     */
    @Test
    void aFileReadFrontToBackHasTheNextBlockOnItsWay() throws Exception {
        byte[] data = randomBytes(BLOCK * 4);
        Path file = new Path(base, "read-ahead");
        write(file, data);
        long before = bytesReadByEveryNode();
        try (FSDataInputStream in = fs.open(file)) {
            assertThat(in.read()).isEqualTo(data[0] & 0xFF);
            Deadline.poll("block 1 read ahead while block 0 is being read", TestingRing.AWAIT_TIMEOUT,
                    () -> bytesReadByEveryNode() - before >= 2L * BLOCK);
            in.seek(BLOCK / 2);
            byte[] rest = in.readAllBytes();
            assertThat(rest).isEqualTo(Arrays.copyOfRange(data, BLOCK / 2, data.length));
        }
    }

    private long bytesReadByEveryNode() {
        return ring.nodes().stream().mapToLong(n -> n.metrics().bytesRead.get()).sum();
    }

    @Test
    void fileIsInvisibleUntilClosed() throws IOException {
        Path file = new Path(base, "pending");
        FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE);
        out.write(randomBytes(BLOCK * 2));
        out.sync();
        assertThat(fs.exists(file)).isFalse();
        out.close();
        assertThat(fs.exists(file)).isTrue();
    }

    /** The parent directory of an exclusive create is made while the stream is written; a file in its place fails the close. */
    @Test
    void noOverwriteCreatesMissingParentsAndRefusesAFileWhereOneShouldBe() throws Exception {
        Path nested = new Path(base, "a/b/c");
        try (FSDataOutputStream out = fs.create(nested, WriteMode.NO_OVERWRITE)) {
            out.write(randomBytes(10));
        }
        assertThat(fs.getFileStatus(new Path(base, "a/b")).isDir()).isTrue();

        Path underAFile = new Path(nested, "d");
        FSDataOutputStream out = fs.create(underAFile, WriteMode.NO_OVERWRITE);
        out.write(randomBytes(10));
        assertThatThrownBy(out::close).isInstanceOf(FileAlreadyExistsException.class)
                .hasMessageContaining("a file exists where a directory is needed");
        assertThat(fs.exists(underAFile)).isFalse();
        assertThat(fs.getFileStatus(nested).isDir()).isFalse();
    }

    /** An exclusive create of a taken path stops at a block write once its lookup has answered, not only at close. */
    @Test
    void noOverwriteOfAnExistingFileFailsAtABlockWriteOnceTheLookupAnswered() throws Exception {
        Path file = new Path(base, "taken");
        byte[] original = randomBytes(10);
        write(file, original);
        FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE);
        byte[] block = randomBytes(BLOCK);
        IOException[] refused = new IOException[1];
        Deadline.poll("a block write to refuse the taken path", TestingRing.AWAIT_TIMEOUT, () -> {
            try {
                out.write(block);
                return false;
            } catch (IOException e) {
                refused[0] = e;
                return true;
            }
        });
        assertThat(refused[0]).isInstanceOf(FileAlreadyExistsException.class).hasMessageContaining("NO_OVERWRITE");
        assertThatThrownBy(out::close).isInstanceOf(FileAlreadyExistsException.class);
        assertThat(read(file)).isEqualTo(original);
    }

    @Test
    void noOverwriteRefusesAnExistingFileAndOverwriteReplacesIt() throws IOException {
        Path file = new Path(base, "f");
        byte[] original = randomBytes(BLOCK + 1);
        write(file, original);
        // The path's lookup runs while the stream is written: the close refuses, nothing is published.
        FSDataOutputStream refused = fs.create(file, WriteMode.NO_OVERWRITE);
        refused.write(randomBytes(10));
        assertThatThrownBy(refused::close).isInstanceOf(FileAlreadyExistsException.class);
        assertThat(read(file)).isEqualTo(original);
        byte[] replacement = randomBytes(10);
        try (FSDataOutputStream out = fs.create(file, WriteMode.OVERWRITE)) {
            out.write(replacement);
        }
        assertThat(read(file)).isEqualTo(replacement);
        assertThat(blocksOnRing()).isEqualTo(2); // one block, two replicas: the old blocks are gone
    }

    @Test
    void deleteRemovesEveryReplica() throws IOException {
        Path file = new Path(base, "f");
        write(file, randomBytes(BLOCK * 3));
        assertThat(blocksOnRing()).isEqualTo(6);
        assertThat(fs.delete(base, true)).isTrue();
        assertThat(blocksOnRing()).isZero();
        assertThatThrownBy(() -> fs.open(file))
                .isInstanceOf(FileNotFoundException.class)
                .hasMessageContaining(file.getPath())
                .hasMessageContaining("sr3.ring.replication-factor (2)");
    }

    @Test
    void listAndRenameWorkOnManifestsAlone() throws IOException {
        write(new Path(base, "a"), randomBytes(10));
        write(new Path(base, "dir/b"), randomBytes(20));
        assertThat(fs.listStatus(base)).extracting(s -> s.getPath().getName()).containsExactlyInAnyOrder("a", "dir");
        assertThat(fs.rename(new Path(base, "dir"), new Path(base, "moved"))).isTrue();
        assertThat(read(new Path(base, "moved/b"))).isEqualTo(randomBytes(20));
        assertThat(fs.exists(new Path(base, "dir/b"))).isFalse();
    }

    @Test
    void corruptReplicaOnDiskIsNeverReadBack() throws IOException {
        byte[] data = randomBytes(BLOCK * 2);
        Path file = new Path(base, "f");
        write(file, data);
        // The writer (node 0) holds the first replica of every block: damage all of its copies.
        RingNode writer = ring.node(0);
        try (DirectoryStream<java.nio.file.Path> blocks = Files.newDirectoryStream(writer.store().directory(), "b-*")) {
            for (java.nio.file.Path block : blocks) {
                try (RandomAccessFile raf = new RandomAccessFile(block.toFile(), "rw")) {
                    raf.seek(raf.length() / 2);
                    raf.write(~raf.read());
                }
            }
        }
        assertThat(read(file)).isEqualTo(data);
        assertThat(writer.metrics().replicaFallbacks.get()).isEqualTo(2);
    }

    @Test
    void losingMoreReplicasThanTheFactorFailsNamingFileAndBlock() throws IOException {
        Path file = new Path(base, "f");
        write(file, randomBytes(BLOCK * 4));
        FileStatus status = fs.getFileStatus(file);
        // Stop node 0 (holds every first replica); destroy the blocks of the others but keep manifests.
        ring.node(0).close();
        for (RingNode node : ring.nodes().subList(1, 3)) {
            for (String key : node.store().keys("b-")) {
                node.store().delete(key);
            }
        }
        assertThat(status.getLen()).isEqualTo(BLOCK * 4L);
        assertThatThrownBy(() -> read(file))
                .isInstanceOf(BlockUnavailableException.class)
                .hasMessageContaining(file.getPath())
                .hasMessageContaining("block 0 of 4");
    }

    @Test
    void aStoppedNodeNotYetOutOfPlacementDoesNotBlockTheNamespace() throws IOException {
        Path before = new Path(base, "before");
        write(before, randomBytes(BLOCK + 5));
        ring.node(2).close(); // other nodes still place data on it until the failure detector notices
        Path after = new Path(base, "after");
        assertThat(fs.exists(after)).isFalse();
        write(after, randomBytes(BLOCK * 2));
        assertThat(read(after)).isEqualTo(randomBytes(BLOCK * 2));
        assertThat(read(before)).isEqualTo(randomBytes(BLOCK + 5));
    }

    private long blocksOnRing() throws IOException {
        long count = 0;
        for (RingNode node : ring.nodes()) {
            count += node.store().keys("b-").size();
        }
        return count;
    }
}
