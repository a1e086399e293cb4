package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.restore.RestoreStats;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.ICloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.PathsCopyingFileSystem.CopyRequest;
import org.apache.flink.core.fs.CloseableRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two restore hooks of {@code sr3://}: {@code copyFiles} (RocksDB's bulk download) and
 * {@code prefetch} (heap state), after the node that wrote the files stopped, so that blocks come
 * from the survivors through a restore plan.
 */
class Sr3FileSystemRestoreTest {

    private static final int BLOCK = TestingRing.testConfig().blockSize();

    @TempDir java.nio.file.Path root;
    @TempDir java.nio.file.Path local;

    private TestingRing ring;
    private Sr3FileSystem fs;
    private final List<Path> files = new ArrayList<>();
    private final List<byte[]> contents = new ArrayList<>();

    @BeforeEach
    void writeFilesThenLoseTheirWriter() throws IOException {
        writeFilesThenLoseTheirWriter(TestingRing.testConfig());
    }

    private void writeFilesThenLoseTheirWriter(io.sr3.flink.node.NodeConfig config) throws IOException {
        if (ring != null) {
            ring.close();
            files.clear();
            contents.clear();
        }
        ring = TestingRing.start(4, config, root.resolve(UUID.randomUUID().toString()));
        Path base = new Path("sr3:///restore-test/" + UUID.randomUUID());
        fs = (Sr3FileSystem) base.getFileSystem();
        int[] sizes = {0, 100, BLOCK, 5 * BLOCK + 17};
        for (int i = 0; i < sizes.length; i++) {
            byte[] data = new byte[sizes[i]];
            new Random(i).nextBytes(data);
            Path path = new Path(base, "file-" + i);
            try (FSDataOutputStream out = fs.create(path, WriteMode.NO_OVERWRITE)) {
                out.write(data);
            }
            files.add(path);
            contents.add(data);
        }
        ring.node(0).close(); // the writer held a replica of every block
        ring.awaitMembers(3);
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    @Test
    void copyFilesRestoresEveryFileIntoDirectoriesItCreates() throws IOException {
        assertThat(fs.canCopyPaths(files.get(0), new Path("000123.sst"))).isTrue();
        assertThat(fs.canCopyPaths(files.get(0), new Path("sr3:///elsewhere"))).isFalse();
        List<CopyRequest> requests = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            java.nio.file.Path destination = local.resolve("job_x_op_Op_1_1_uuid_y").resolve("not-yet-created").resolve("f" + i);
            requests.add(CopyRequest.of(files.get(i), new Path(destination.toUri()), contents.get(i).length));
        }
        try (CloseableRegistry registry = new CloseableRegistry()) {
            fs.copyFiles(requests, registry);
        }

        for (int i = 0; i < files.size(); i++) {
            assertThat(Files.readAllBytes(java.nio.file.Paths.get(requests.get(i).getDestination().toUri())))
                    .as("file %d", i).isEqualTo(contents.get(i));
        }
        RingNode recovering = current();
        assertThat(RestoreStats.of(recovering).last()).isNotNull();
        assertThat(RestoreStats.of(recovering).last().description()).contains("4 file(s)", "job_x_op_Op_1_1_uuid_y");
        assertThat(RestoreStats.of(recovering).last().blocks()).isEqualTo(1 + 1 + 6);
    }

    @Test
    void copyOfAFileTheRingDoesNotKnowFailsNamingIt() {
        Path missing = new Path(files.get(0).getParent(), "never-written");
        List<CopyRequest> requests = List.of(CopyRequest.of(missing, new Path(local.resolve("x").toUri()), 1));
        assertThatThrownBy(() -> fs.copyFiles(requests, ICloseableRegistry.NO_OP))
                .isInstanceOf(FileNotFoundException.class)
                .hasMessageContaining("never-written");
    }

    @Test
    void prefetchedFilesAreReadWithoutGoingBackToTheRing() throws IOException {
        long total = contents.stream().mapToLong(c -> c.length).sum();
        assertThat(fs.prefetch(files, "Op_(1/1)")).isTrue();
        assertThat(Sr3FileSystem.prefetchedBytes()).isEqualTo(total);
        assertThat(RestoreStats.of(current()).last().description()).isEqualTo("Op_(1/1)");

        for (int i = 0; i < files.size(); i++) {
            assertThat(read(files.get(i))).as("file %d", i).isEqualTo(contents.get(i));
        }
        assertThat(Sr3FileSystem.prefetchedBytes()).isZero(); // every block came from the prefetch
        // Each block is handed out once: a second read goes to the ring again, and is still exact.
        assertThat(read(files.get(3))).isEqualTo(contents.get(3));
    }

    @Test
    void prefetchLargerThanTheLimitIsSkippedAndTheFilesStillRead() throws IOException {
        io.sr3.flink.node.NodeConfig limited = TestingRing.testConfig()
                .withRestore(TestingRing.testConfig().restore().withPrefetchMaxBytes(BLOCK));
        writeFilesThenLoseTheirWriter(limited);

        assertThat(fs.prefetch(files, "Op_(1/1)")).isFalse();
        assertThat(RestoreStats.of(current()).last()).isNull();
        assertThat(read(files.get(3))).isEqualTo(contents.get(3));
    }

    private RingNode current() throws IOException {
        return io.sr3.flink.node.LocalRing.current();
    }

    private byte[] read(Path path) throws IOException {
        FileSystem any = fs;
        try (FSDataInputStream in = any.open(path)) {
            byte[] data = new byte[(int) any.getFileStatus(path).getLen()];
            int off = 0;
            while (off < data.length) {
                int n = in.read(data, off, data.length - off);
                assertThat(n).isPositive();
                off += n;
            }
            return data;
        }
    }
}
