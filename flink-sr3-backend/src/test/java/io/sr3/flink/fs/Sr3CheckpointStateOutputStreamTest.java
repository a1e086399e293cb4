package io.sr3.flink.fs;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.transport.LinkShaper;
import io.sr3.flink.transport.LinkShaper.ShapedLink;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink cancels a checkpoint by closing its state streams: on sr3 such a stream abandons its file
 * (nothing published, not even the tombstone a delete leaves, and its blocks deleted), while a
 * stream that handed out its handle keeps the file; a cancel does not wait for a write or a
 * {@code closeAndGetHandle} that waits for holders. Real ring of 3 nodes on loopback, rf 2.
 */
class Sr3CheckpointStateOutputStreamTest {

    private static final int BLOCK = TestingRing.testConfig().blockSize();
    private static final double FAST = 1e12;
    private static final Duration ANSWERS_HELD_BACK = Duration.ofSeconds(60);

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

    @Test
    void cancellingDoesNotWaitForAWriterBlockedOnHoldersThatDoNotAnswer() throws Exception {
        Sr3FileSystem fs = ringWhoseAnswersAreHeldBack();
        Path base = new Path("sr3:///blocked-write-test/" + UUID.randomUUID());
        Sr3CheckpointStateOutputStream stream = Sr3CheckpointStateOutputStream.create(base, fs, () -> 0, 4096, 1024, false);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread writer = start("blocked-checkpoint-writer", failure,
                () -> stream.write(bytes((Sr3OutputStream.MAX_BLOCKS_IN_FLIGHT + 2) * BLOCK)));

        assertCancelReturnsAtOnce(stream, writer);

        assertThat(failure.get()).isInstanceOf(IOException.class).hasMessageContaining("abandoned");
        assertThat(keysInStores(NamespaceKeys.childrenPrefix(base.toUri().getPath())))
                .as("manifests of files under %s in any store", base).isZero();
    }

    @Test
    void cancellingEndsAHandleWaitingForHoldersThatDoNotAnswerAndPublishesNothing() throws Exception {
        Sr3FileSystem fs = ringWhoseAnswersAreHeldBack();
        Path base = new Path("sr3:///blocked-handle-test/" + UUID.randomUUID());
        Sr3CheckpointStateOutputStream stream = Sr3CheckpointStateOutputStream.create(base, fs, () -> 0, 4096, 1024, false);
        stream.write(bytes(2 * BLOCK + 99));
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread publisher = start("blocked-checkpoint-publisher", failure, stream::closeAndGetHandle);

        assertCancelReturnsAtOnce(stream, publisher);

        assertThat(failure.get()).as("the handle").isInstanceOf(IOException.class).hasStackTraceContaining("abandoned");
        assertThat(keysInStores(NamespaceKeys.childrenPrefix(base.toUri().getPath())))
                .as("manifests of files under %s in any store", base).isZero();
    }

    /** Closes {@code stream} once {@code blocked} waits in it, and checks that both end long before any holder answers. */
    private static void assertCancelReturnsAtOnce(Sr3CheckpointStateOutputStream stream, Thread blocked)
            throws InterruptedException {
        Deadline.poll(blocked.getName() + " waiting for the holders", Duration.ofSeconds(20),
                () -> blocked.getState() == Thread.State.WAITING, () -> blocked.getName() + " " + blocked.getState());

        long start = System.nanoTime();
        stream.close();
        Duration closing = Duration.ofNanos(System.nanoTime() - start);

        assertThat(closing).as("the cancel, while every holder's answer is held back %s", ANSWERS_HELD_BACK)
                .isLessThan(ANSWERS_HELD_BACK.dividedBy(4));
        blocked.join(Duration.ofSeconds(20).toMillis());
        assertThat(blocked.isAlive()).as("%s still blocked", blocked.getName()).isFalse();
    }

    /**
     * A ring of 3 in which every answer a node receives is held back, so no remote request
     * completes (the stores are checked directly, not through the ring).
     */
    private Sr3FileSystem ringWhoseAnswersAreHeldBack() throws IOException {
        TestingRing ring = rings.start(3, patientConfig());
        for (RingNode node : ring.nodes()) {
            node.shapeInboundLinks(new LinkShaper(FAST, 8, 0, new ShapedLink(FAST, ANSWERS_HELD_BACK)));
        }
        return (Sr3FileSystem) new Path("sr3:///").getFileSystem();
    }

    private static Thread start(String name, AtomicReference<Throwable> failure, StreamAction action) {
        Thread thread = new Thread(() -> {
            try {
                action.run();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, name);
        thread.start();
        return thread;
    }

    private interface StreamAction {
        void run() throws IOException;
    }

    /** Request deadline and failure detection longer than {@link #ANSWERS_HELD_BACK}: only the answers' delay blocks writes. */
    private static NodeConfig patientConfig() {
        NodeConfig test = TestingRing.testConfig();
        Duration patience = ANSWERS_HELD_BACK.multipliedBy(2);
        return new NodeConfig(test.host(), List.of(0), List.of(), 2, "", 16, null, false, null, test.maxFrameSize(),
                patience, Duration.ofMillis(100), patience, test.blockSize())
                .withDurability(test.durability());
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
