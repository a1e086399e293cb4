package io.sr3.flink.fs;

import io.sr3.flink.node.BlockScrubber;
import io.sr3.flink.node.BlockUnavailableException;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.testing.Deadline;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.testutils.logging.LoggerAuditingExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.event.Level;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Replicas lost on nodes that stay up: a block file deleted, damaged or truncated by hand on a
 * live node is found (by the holder's scrubber, or by the repairing node asking the holders) and
 * re-created until the manifest lists the replication factor of intact copies again; a block no
 * node has is reported. Four real nodes over loopback, replication factor 2.
 *
 * <p>Node 0 is the node of this JVM's {@code sr3://} file system, so its repairer runs on its
 * maintenance schedule; the others' repairers are run by the tests, as their schedules would.
 */
class ReplicaPresenceTest {

    private static final Duration CHECK_INTERVAL = Duration.ofMillis(1);
    private static final int BLOCK = TestingRing.testConfig().blockSize();

    @TempDir java.nio.file.Path root;

    @RegisterExtension
    final LoggerAuditingExtension repairWarnings = new LoggerAuditingExtension(ReplicaRepairer.class, Level.WARN);

    @RegisterExtension
    final LoggerAuditingExtension scrubWarnings = new LoggerAuditingExtension(BlockScrubber.class, Level.WARN);

    private TestingRing ring;
    private List<ReplicaRepairer> repairers;
    private Path file;
    private byte[] data;
    private Sr3FileSystem fs;

    /** Every scan a check; scrubbing as fast as the disk allows. */
    private static NodeConfig config() {
        NodeConfig config = TestingRing.testConfig();
        return config.withDurability(config.durability()
                .withRepairCheckInterval(CHECK_INTERVAL)
                .withScrub(1L << 30, Duration.ofMillis(1)));
    }

    @BeforeEach
    void writeAFile() throws IOException {
        ring = TestingRing.start(4, config(), root);
        file = new Path("sr3:///presence-test/" + UUID.randomUUID() + "/data");
        fs = (Sr3FileSystem) file.getFileSystem();
        data = new byte[3 * BLOCK + 17];
        new Random(11).nextBytes(data);
        try (FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE)) {
            out.write(data);
        }
        // Each repairer's clock moves a check interval per reading, so every run is a check however fast the last one was.
        repairers = ring.nodes().subList(1, 4).stream().map(node -> {
            AtomicLong clock = new AtomicLong();
            return new ReplicaRepairer(node, () -> clock.addAndGet(CHECK_INTERVAL.toNanos()));
        }).toList();
    }

    @AfterEach
    void stop() {
        if (ring != null) {
            ring.close();
        }
    }

    @Test
    void aBlockFileDeletedByHandOnALiveNodeIsReCreatedAndTheManifestListsTheFactorAgain() throws Exception {
        FileBlock block = fs.fileBlocks(file).get(0);
        RingNode holder = holderOtherThanNode0(block);
        Files.delete(holder.store().directory().resolve(block.key()));

        awaitRepaired(block);
        assertThat(missingReplicasFound()).as("replicas found missing by repair checks").isPositive();
        assertThat(repairWarnings.getMessages()).anySatisfy(m -> assertThat(m).contains(block.key(), "missing"));
        assertThat(read()).isEqualTo(data);
    }

    @Test
    void aFlippedByteIsQuarantinedByTheScrubberNeverServedAgainAndReCreated() throws Exception {
        FileBlock block = fs.fileBlocks(file).get(1);
        RingNode holder = holderOtherThanNode0(block);
        java.nio.file.Path blockFile = holder.store().directory().resolve(block.key());
        try (RandomAccessFile raf = new RandomAccessFile(blockFile.toFile(), "rw")) {
            long at = Files.size(blockFile) - 100; // in the data, not the header: only the scrubber sees it
            raf.seek(at);
            int b = raf.read();
            raf.seek(at);
            raf.write(b ^ 0x10);
        }
        assertThat(holder.store().presence(block.key(), block.length(), block.crc32c()).state())
                .as("the header alone cannot tell").isEqualTo(BlockStore.Presence.State.INTACT);

        BlockScrubber scrubber = new BlockScrubber(holder);
        Deadline.poll("the scrubber of " + holder.self() + " to find the damaged block", TestingRing.AWAIT_TIMEOUT, () -> {
            scrubber.run();
            return holder.metrics().corruptBlocksFound.get() == 1;
        });
        assertThat(Files.exists(holder.store().quarantined(block.key()))).as("moved aside").isTrue();
        assertThat(holder.store().contains(block.key())).as("no longer in the store").isFalse();
        assertThat(holder.store().keys("")).noneMatch(k -> k.contains("corrupt"));
        assertThat(scrubWarnings.getMessages()).singleElement().asString()
                .contains(block.key(), blockFile.toString(), "CRC32C mismatch");

        awaitRepaired(block);
        assertThat(read()).isEqualTo(data);
    }

    @Test
    void aDamagedBlockThatAPeerAsksForIsMovedAsideAtOnceAndReCreated() throws Exception {
        FileBlock block = fs.fileBlocks(file).get(0);
        RingNode holder = holderOtherThanNode0(block);
        java.nio.file.Path blockFile = holder.store().directory().resolve(block.key());
        try (RandomAccessFile raf = new RandomAccessFile(blockFile.toFile(), "rw")) {
            raf.seek(Files.size(blockFile) - 1);
            int b = raf.read();
            raf.seek(Files.size(blockFile) - 1);
            raf.write(b ^ 0x01);
        }

        assertThatThrownBy(() -> io.sr3.flink.node.RingStorage.await(ring.node(0).get(holder.self(), block.key())))
                .hasMessageContaining("CRC32C mismatch");
        assertThat(holder.metrics().corruptBlocksFound.get()).as("found by the read, no scrub ran").isEqualTo(1);
        assertThat(holder.store().contains(block.key())).isFalse();
        assertThat(Files.exists(holder.store().quarantined(block.key()))).isTrue();

        awaitRepaired(block);
        assertThat(read()).isEqualTo(data);
    }

    @Test
    void aTruncatedBlockFileIsFoundFromItsHeaderAndReCreated() throws Exception {
        FileBlock block = fs.fileBlocks(file).get(2);
        RingNode holder = holderOtherThanNode0(block);
        java.nio.file.Path blockFile = holder.store().directory().resolve(block.key());
        try (FileChannel channel = FileChannel.open(blockFile, StandardOpenOption.WRITE)) {
            channel.truncate(Files.size(blockFile) / 2);
        }

        awaitRepaired(block);
        assertThat(missingReplicasFound()).isPositive();
        assertThat(repairWarnings.getMessages()).anySatisfy(m -> assertThat(m).contains(block.key(), "corrupt"));
        assertThat(read()).isEqualTo(data);
    }

    @Test
    void aBlockMissingOnEveryHolderIsReportedAsLostAndCountsAgainOnceACopyReturns() throws Exception {
        FileBlock block = fs.fileBlocks(file).get(3);
        byte[] saved = null;
        for (Member m : block.holders()) {
            RingNode holder = nodeOf(m);
            saved = holder.store().get(block.key());
            Files.delete(holder.store().directory().resolve(block.key()));
        }

        Deadline.poll("the repairing node to count the block as lost", TestingRing.AWAIT_TIMEOUT, () -> {
            repairers.forEach(ReplicaRepairer::run);
            return lostBlocks() == 1;
        });
        assertThat(repairWarnings.getMessages()).anySatisfy(m -> assertThat(m).contains(block.key(), "LOST"));
        assertThat(fs.fileBlocks(file).get(3).holders()).as("still named, for fsck and readers")
                .hasSize(2);
        assertThatThrownBy(this::read).isInstanceOf(BlockUnavailableException.class).hasMessageContaining(block.key());

        // A copy comes back (an operator restores it): it is found and replicated, and nothing is lost any more.
        nodeOf(block.holders().get(0)).store().put(block.key(), saved);
        awaitRepaired(block);
        Deadline.poll("no lost block counted", TestingRing.AWAIT_TIMEOUT, () -> {
            repairers.forEach(ReplicaRepairer::run);
            return lostBlocks() == 0;
        });
        assertThat(read()).isEqualTo(data);
    }

    @Test
    void checksOfAHealthyFileReadNoBlockDataAndCopyNothing() throws Exception {
        long readBefore = ring.nodes().stream().mapToLong(n -> n.metrics().bytesRead.get()).sum();
        long scansBefore = ring.nodes().stream().mapToLong(n -> n.metrics().repairScans.get()).sum();
        for (int round = 0; round < 5; round++) {
            repairers.forEach(ReplicaRepairer::run);
        }
        long read = ring.nodes().stream().mapToLong(n -> n.metrics().bytesRead.get()).sum() - readBefore;
        assertThat(ring.nodes().stream().mapToLong(n -> n.metrics().repairScans.get()).sum() - scansBefore)
                .as("every run a check scan").isGreaterThanOrEqualTo(15);
        assertThat(read).as("bytes read by 15 check scans of a file of %d bytes: its manifest's copies only",
                data.length).isLessThan(BLOCK);
        assertThat(missingReplicasFound()).isZero();
        assertThat(ring.nodes().stream().mapToLong(n -> n.metrics().blocksReReplicated.get()).sum()).isZero();
        assertThat(lostBlocks()).isZero();
    }

    /** Runs the repairers until the manifest lists two holders of {@code block} that hold it intact, data included. */
    private void awaitRepaired(FileBlock block) {
        Deadline.poll("two intact replicas of " + block.key() + " listed in the manifest", TestingRing.AWAIT_TIMEOUT, () -> {
            repairers.forEach(ReplicaRepairer::run);
            try {
                FileBlock now = fs.fileBlocks(file).stream().filter(b -> b.key().equals(block.key())).findFirst()
                        .orElseThrow();
                if (now.holders().size() != 2) {
                    return false;
                }
                for (Member m : now.holders()) {
                    nodeOf(m).store().get(block.key(), block.length(), block.crc32c());
                }
                return true;
            } catch (IOException e) {
                return false;
            }
        });
    }

    private byte[] read() throws IOException {
        try (FSDataInputStream in = fs.open(file)) {
            return in.readAllBytes();
        }
    }

    private RingNode holderOtherThanNode0(FileBlock block) {
        for (Member m : block.holders()) {
            if (!m.sameNode(ring.node(0).self())) {
                return nodeOf(m);
            }
        }
        throw new AssertionError("every holder of " + block.key() + " is node 0: " + block.holders());
    }

    private RingNode nodeOf(Member member) {
        return ring.nodes().stream().filter(n -> n.self().sameNode(member)).findFirst().orElseThrow();
    }

    private long missingReplicasFound() {
        return ring.nodes().stream().mapToLong(n -> n.metrics().missingReplicasFound.get()).sum();
    }

    private long lostBlocks() {
        return ring.nodes().stream().mapToLong(n -> n.metrics().lostBlocks.get()).sum();
    }
}
