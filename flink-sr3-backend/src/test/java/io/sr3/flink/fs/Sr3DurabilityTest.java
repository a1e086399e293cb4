package io.sr3.flink.fs;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.ReplicasUnreachableException;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.node.WriteQuorumException;
import io.sr3.flink.ring.Member;
import io.sr3.flink.testing.Deadline;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.nio.file.FileAlreadyExistsException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the ring promises about acknowledged files when nodes stop, return and disagree: writes
 * below the quorum fail, unreachable is never absent, cleanup never deletes under a partial view,
 * deletes survive a returning node, and one bad manifest stops neither repair nor sweep. Real
 * nodes over loopback; a stopped node restarted on its port with its store stands for a paused or
 * restarted process that keeps its disk.
 */
class Sr3DurabilityTest {

    private static final Duration GRACE = Duration.ofMinutes(10);
    private static final int BLOCK = TestingRing.testConfig().blockSize();

    @TempDir java.nio.file.Path root;

    private TestingRing ring;

    @AfterEach
    void stop() {
        if (ring != null) {
            ring.close();
        }
    }

    private static NodeConfig config() {
        return TestingRing.testConfig().withStoreLimits(Long.MAX_VALUE, GRACE);
    }

    private static byte[] bytes(int size) {
        byte[] data = new byte[size];
        new Random(size).nextBytes(data);
        return data;
    }

    private static void write(FileSystem fs, Path path, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(path, WriteMode.NO_OVERWRITE)) {
            out.write(data);
        }
    }

    private static byte[] read(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    /** A path under {@code dir} whose manifest is placed on nodes 1 and 2 of a three-node ring, not on node 0. */
    private Path pathPlacedAwayFromNode0(Path dir) {
        for (int i = 0; i < 1000; i++) {
            Path candidate = new Path(dir, "f" + i);
            List<Member> placement = ring.node(0).membership().ring()
                    .placement(NamespaceKeys.manifestKey(candidate.toUri().getPath()), null, 2);
            if (placement.stream().noneMatch(m -> m.sameNode(ring.node(0).self()))) {
                return candidate;
            }
        }
        throw new AssertionError("no path placed away from node 0 in 1000 tries");
    }

    private void awaitRingSizeSeenBy(RingNode node, int size) {
        Deadline.poll(node.self() + " to see " + size + " member(s)", TestingRing.AWAIT_TIMEOUT, () -> node.membership().members().size() == size);
    }

    /**
     * Of two nodes that are not the writer, the one holding more of its blocks: placement hashes
     * random node ids, and with six blocks one of the two holds at least three.
     */
    private int nodeHoldingMoreBlocks(int a, int b) throws IOException {
        return ring.node(a).store().keys("b-").size() >= ring.node(b).store().keys("b-").size() ? a : b;
    }

    private long copiesOnDisk(String key) {
        return ring.nodes().stream().filter(n -> n.isRunning() && n.store().contains(key)).count();
    }

    @Test
    void aWriteBelowTheQuorumFailsNamingTheBlockAndTheNodesAndPublishesNothing() throws Exception {
        int unusedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            unusedPort = socket.getLocalPort();
        }
        // A seed makes this a ring of several processes, where the quorum is never lowered.
        NodeConfig config = new NodeConfig("127.0.0.1", List.of(0), List.of("127.0.0.1:" + unusedPort), 3, "", 16, null,
                false, null, 256 * 1024, Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ofSeconds(1), BLOCK);
        ring = TestingRing.start(2, config, root);
        Path file = new Path("sr3:///quorum-test/" + UUID.randomUUID() + "/f");
        FileSystem fs = file.getFileSystem();
        // The parent directories' manifests fail first; an exclusive create waits for them at close.
        assertThatThrownBy(() -> write(fs, file, bytes(BLOCK + 1)))
                .hasCauseInstanceOf(WriteQuorumException.class)
                .hasMessageContaining("sr3.ring.min-replicas")
                .hasMessageContaining(ring.node(0).self().id())
                .hasMessageContaining(ring.node(1).self().id())
                .hasMessageContaining("the ring has 2 reachable storage node(s), fewer than the quorum");
        assertThat(fs.exists(file)).isFalse();
        assertThat(ring.node(0).metrics().failedWrites.get()).isPositive();

        // With the directories in place, the file's own blocks fail the close, and it is never visible.
        for (Path dir = file.getParent(); !dir.toUri().getPath().equals("/"); dir = dir.getParent()) {
            String path = dir.toUri().getPath();
            for (RingNode holder : ring.nodes()) {
                RingStorage.await(ring.node(0).put(holder.self(), NamespaceKeys.manifestKey(path),
                        Manifest.directory(path, 1, 1).encode()));
            }
        }
        assertThatThrownBy(() -> write(fs, file, bytes(BLOCK + 1)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(file.toUri().getPath() + " to the sr3 ring")
                .hasCauseInstanceOf(WriteQuorumException.class)
                .hasMessageContaining("b-");
        assertThat(fs.exists(file)).isFalse();
    }

    @Test
    void aRingOfOneProcessKeepsAsManyCopiesAsItHasNodes() throws Exception {
        NodeConfig config = new NodeConfig("127.0.0.1", List.of(0), List.of(), 3, "", 16, null, false, null, 256 * 1024,
                Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ofSeconds(1), BLOCK);
        ring = TestingRing.start(2, config, root);
        Path file = new Path("sr3:///quorum-test/" + UUID.randomUUID() + "/f");
        FileSystem fs = file.getFileSystem();
        write(fs, file, bytes(BLOCK + 1));
        assertThat(read(fs, file)).isEqualTo(bytes(BLOCK + 1));
        assertThat(ring.node(0).storage().writeQuorum()).isEqualTo(2);
    }

    @Test
    void aFileWhoseHoldersAreUnreachableIsUnavailableNotAbsent() throws Exception {
        // Removed holders count as possible holders for the repair delay (plus the detector's timeout).
        NodeConfig config = config().withDurability(config().durability().withRepairDelay(Duration.ofMinutes(1)));
        ring = TestingRing.start(3, config, root);
        Path file = pathPlacedAwayFromNode0(new Path("sr3:///unavailable-test/" + UUID.randomUUID()));
        FileSystem fs = file.getFileSystem();
        write(fs, file, bytes(BLOCK * 2));
        String[] holders = {ring.node(1).self().id(), ring.node(2).self().id()};
        ring.node(1).close();
        ring.node(2).close();
        awaitRingSizeSeenBy(ring.node(0), 1);
        assertThatThrownBy(() -> fs.exists(file))
                .isInstanceOf(ReplicasUnreachableException.class)
                .hasMessageContaining("unavailable, not lost")
                .hasMessageContaining(holders[0])
                .hasMessageContaining(holders[1]);
        assertThatThrownBy(() -> fs.open(file)).isInstanceOf(ReplicasUnreachableException.class);
        // An exclusive create looks the path up while its stream is written; the close fails.
        FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE);
        out.write(bytes(10));
        assertThatThrownBy(out::close).hasCauseInstanceOf(ReplicasUnreachableException.class);
    }

    @Test
    void holdersAwayPastTheDetectorAndTwoSweepsLoseNothing() throws Exception {
        ring = TestingRing.start(3, config(), root);
        Path file = pathPlacedAwayFromNode0(new Path("sr3:///sweep-test/" + UUID.randomUUID()));
        FileSystem fs = file.getFileSystem();
        byte[] data = bytes(BLOCK * 4);
        write(fs, file, data);
        List<String> blocks = new ArrayList<>(ring.node(0).store().keys("b-"));
        assertThat(blocks).as("the writer holds a copy of every block").hasSize(4);

        ring.node(1).close();
        ring.node(2).close();
        awaitRingSizeSeenBy(ring.node(0), 1);
        SweepsAGraceApart sweeps = new SweepsAGraceApart(ring.node(0));
        for (int sweep = 0; sweep < 3; sweep++) {
            assertThat(sweeps.next()).as("a sweep under a partial view deletes nothing").isZero();
        }

        ring.restart(1);
        ring.restart(2);
        ring.awaitMembers(3);
        assertThat(read(fs, file)).isEqualTo(data);
        for (String block : blocks) {
            assertThat(copiesOnDisk(block)).as("copies of " + block).isEqualTo(2);
        }
    }

    @Test
    void aFileDeletedWhileAHolderWasDownStaysDeletedAndItsBlocksAreSwept() throws Exception {
        ring = TestingRing.start(3, config(), root);
        Path dir = new Path("sr3:///delete-test/" + UUID.randomUUID());
        Path file = pathPlacedAwayFromNode0(dir);
        FileSystem fs = file.getFileSystem();
        write(fs, file, bytes(BLOCK * 6));
        String manifestKey = NamespaceKeys.manifestKey(file.toUri().getPath());
        int away = nodeHoldingMoreBlocks(1, 2);
        assertThat(ring.node(away).store().contains(manifestKey)).isTrue();
        assertThat(ring.node(away).store().keys("b-")).as("node %d holds some of the blocks", away).isNotEmpty();

        ring.node(away).close();
        awaitRingSizeSeenBy(ring.node(0), 2);
        awaitRingSizeSeenBy(ring.node(3 - away), 2);
        assertThat(fs.delete(file, false)).isTrue();

        RingNode returned = ring.restart(away);
        ring.awaitMembers(3);
        assertThat(fs.exists(file)).as("the returning node's old copy does not bring the file back").isFalse();
        Deadline.poll("read repair of the returned node's copy", TestingRing.AWAIT_TIMEOUT, () -> isTombstone(returned, manifestKey));

        SweepsAGraceApart sweeps = new SweepsAGraceApart(returned);
        sweeps.next();
        assertThat(sweeps.next()).as("the deleted file's blocks on the returned node").isPositive();
        assertThat(returned.store().keys("b-")).isEmpty();
    }

    /**
     * The orphan sweeper of one node, with clocks that stand two grace periods ahead (every block
     * is old enough, the node has been up long enough) and move a grace period on after each sweep.
     */
    private static final class SweepsAGraceApart {
        private final AtomicLong wallMillis = new AtomicLong(System.currentTimeMillis() + 2 * GRACE.toMillis());
        private final AtomicLong nanos = new AtomicLong();
        private final OrphanSweeper sweeper;

        SweepsAGraceApart(RingNode node) {
            sweeper = new OrphanSweeper(node, wallMillis::get, nanos::get);
            nanos.set(GRACE.toNanos());
        }

        /** One sweep; returns the blocks it deleted. */
        long next() throws IOException {
            long deleted = sweeper.sweep();
            wallMillis.addAndGet(GRACE.toMillis());
            nanos.addAndGet(GRACE.toNanos());
            return deleted;
        }
    }

    private static boolean isTombstone(RingNode node, String key) {
        try {
            return Manifest.decode(node.store().get(key), key).isTombstone();
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void nodesBackOnNewPortsWithTheirStoresAreTheSameMembersAndTheirCopiesCount() throws Exception {
        ring = TestingRing.start(3, config(), root);
        Path file = new Path("sr3:///identity-test/" + UUID.randomUUID() + "/f");
        FileSystem fs = file.getFileSystem();
        byte[] data = bytes(BLOCK * 4);
        write(fs, file, data);
        String[] ids = {ring.node(1).self().nodeId(), ring.node(2).self().nodeId()};
        String[] oldAddresses = {ring.node(1).self().id(), ring.node(2).self().id()};

        ring.restartOnNewPort(1);
        ring.restartOnNewPort(2);
        assertThat(ring.node(1).self().nodeId()).isEqualTo(ids[0]);
        assertThat(ring.node(2).self().nodeId()).isEqualTo(ids[1]);
        assertThat(ring.node(1).self().id()).isNotEqualTo(oldAddresses[0]);
        RingNode reader = ring.node(0);
        Deadline.poll("the ring to see both nodes at their new addresses only", TestingRing.AWAIT_TIMEOUT, () -> reader.membership().members().size() == 3
                && reader.membership().at(oldAddresses[0]).isEmpty() && reader.membership().at(oldAddresses[1]).isEmpty());

        Manifest manifest = new ManifestStore(reader).live(file.toUri().getPath(), "test");
        assertThat(manifest).isNotNull();
        for (Manifest.BlockRef block : manifest.blocks()) {
            assertThat(block.holders()).as("holders of " + block.key()).hasSize(2)
                    .allMatch(h -> reader.membership().isLive(h) && reader.membership().current(h).id().equals(h.id()));
        }
        for (String key : reader.store().keys("b-")) {
            reader.store().delete(key); // the writer's copies are gone: only the moved nodes can serve
        }
        assertThat(read(fs, file)).isEqualTo(data);
    }

    @Test
    void copiesOfANodeThatReturnsAfterRepairAreTrimmedAsSurplus() throws Exception {
        ring = TestingRing.start(3, config(), root);
        Path file = new Path("sr3:///surplus-test/" + UUID.randomUUID() + "/f");
        FileSystem fs = file.getFileSystem();
        byte[] data = bytes(BLOCK * 6);
        write(fs, file, data);
        int leaving = nodeHoldingMoreBlocks(1, 2);
        List<String> away = new ArrayList<>(ring.node(leaving).store().keys("b-"));
        assertThat(away).as("node %d holds some of the blocks", leaving).isNotEmpty();

        ring.node(leaving).close();
        awaitRingSizeSeenBy(ring.node(0), 2);
        awaitRingSizeSeenBy(ring.node(3 - leaving), 2);
        for (int i : new int[] {0, 3 - leaving}) {
            new ReplicaRepairer(ring.node(i)).run(); // node 0's scheduled repair may have run already
        }
        for (String key : away) {
            assertThat(copiesOnDisk(key)).as("copies of " + key + " after the repair").isEqualTo(2);
        }

        RingNode returned = ring.restart(leaving);
        ring.awaitMembers(3);
        SweepsAGraceApart sweeps = new SweepsAGraceApart(returned);
        assertThat(sweeps.next()).as("a first sighting deletes nothing").isZero();
        assertThat(sweeps.next()).isEqualTo(away.size());
        assertThat(returned.metrics().surplusBlocksTrimmed.get()).isEqualTo(away.size());
        for (String key : away) {
            assertThat(copiesOnDisk(key)).as("copies of " + key + " after the trim").isEqualTo(2);
        }
        assertThat(read(fs, file)).isEqualTo(data);
    }

    @Test
    void ofConcurrentNoOverwriteCreatesOfOnePathExactlyOneWinsAndTheLosersLeaveNothing() throws Exception {
        ring = TestingRing.start(3, config(), root);
        Path file = new Path("sr3:///create-race/" + UUID.randomUUID() + "/f");
        FileSystem fs = file.getFileSystem();
        int creators = 6;
        List<FSDataOutputStream> streams = new ArrayList<>();
        List<byte[]> contents = new ArrayList<>();
        for (int i = 0; i < creators; i++) {
            // Every stream opens before any closes: each one's lookup finds the path free.
            FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE);
            byte[] data = bytes(BLOCK * 2 + i);
            out.write(data);
            streams.add(out);
            contents.add(data);
        }
        ExecutorService closers = Executors.newFixedThreadPool(creators);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> closes = new ArrayList<>();
        List<Integer> winners = new ArrayList<>();
        try {
            for (FSDataOutputStream out : streams) {
                closes.add(closers.submit(() -> {
                    start.await();
                    out.close();
                    return null;
                }));
            }
            start.countDown();
            for (int i = 0; i < creators; i++) {
                try {
                    closes.get(i).get(30, TimeUnit.SECONDS);
                    winners.add(i);
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).as("creator %d lost", i).isInstanceOf(FileAlreadyExistsException.class)
                            .hasMessageContaining("another writer");
                }
            }
            assertThat(winners).as("creators whose close succeeded").hasSize(1);
            assertThat(read(fs, file)).isEqualTo(contents.get(winners.get(0)));
        } finally {
            closers.shutdownNow();
        }
        // The losers' blocks go; the winner's stay, each on 2 nodes.
        long winnerBlocks = (contents.get(winners.get(0)).length + BLOCK - 1) / BLOCK;
        Deadline.poll("the losers' blocks to be deleted", TestingRing.AWAIT_TIMEOUT, () -> blocksOnDisk() == winnerBlocks * 2);
        assertThat(read(fs, file)).isEqualTo(contents.get(winners.get(0)));
    }

    private long blocksOnDisk() {
        long blocks = 0;
        for (RingNode node : ring.nodes()) {
            try {
                blocks += node.store().keys("b-").size();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return blocks;
    }

    /**
     * Two repairers with different views can leave same-generation copies that list different
     * holders; the one a reader does not pick must not survive on a node that does not own the
     * file's repair (the audit of that node counted it under-replicated forever, and the fault
     * soak waited for a repair that no node had pending).
     */
    @Test
    void aSameGenerationCopyThatListsADepartedHolderIsReplacedByTheNewestOnEveryNode() throws Exception {
        ring = TestingRing.start(3, config(), root);
        Path file = new Path("sr3:///diverged-test/" + UUID.randomUUID() + "/f");
        FileSystem fs = file.getFileSystem();
        byte[] data = bytes(BLOCK * 2);
        write(fs, file, data);
        String manifestKey = NamespaceKeys.manifestKey(file.toUri().getPath());
        RingNode writer = ring.nodes().stream().filter(n -> n.store().contains(manifestKey)).findFirst().orElseThrow();
        byte[] good = writer.store().get(manifestKey);
        byte[] stale = copyListingADepartedHolder(Manifest.decode(good, manifestKey), good);
        List<Member> order = writer.membership().ring().successors(manifestKey);
        RingNode last = ring.nodes().stream().filter(n -> n.self().sameNode(order.get(order.size() - 1))).findFirst()
                .orElseThrow();
        last.store().put(manifestKey, stale); // the last in ring order never owns the file's repair

        for (RingNode node : ring.nodes()) {
            new ReplicaRepairer(node).run();
        }
        for (RingNode node : ring.nodes()) {
            if (node.store().contains(manifestKey)) {
                assertThat(Manifest.decode(node.store().get(manifestKey), manifestKey)).as("the copy on %s", node.self())
                        .isEqualTo(Manifest.decode(good, manifestKey));
            }
            assertThat(new ReplicaRepairer(node).audit()[0]).as("under-replicated blocks seen by %s", node.self())
                    .isZero();
        }
        assertThat(read(fs, file)).isEqualTo(data);
    }

    /**
     * A copy of {@code manifest} at its generation whose first block names a member that left
     * instead of one of its holders, chosen so that it ranks below {@code encoded} (same holder
     * count, lower bytes).
     */
    private static byte[] copyListingADepartedHolder(Manifest manifest, byte[] encoded) {
        Manifest.BlockRef first = manifest.blocks().get(0);
        for (int attempt = 0; attempt < 100; attempt++) {
            List<Member> holders = new ArrayList<>(first.holders());
            Member replaced = holders.get(holders.size() - 1);
            holders.set(holders.size() - 1,
                    new Member("n" + UUID.randomUUID().toString().replace("-", "").substring(0, 16), "127.0.0.1", 1,
                            replaced.zone()));
            List<Manifest.BlockRef> blocks = new ArrayList<>(manifest.blocks());
            blocks.set(0, new Manifest.BlockRef(first.key(), first.length(), first.crc32c(), holders));
            byte[] candidate = manifest.withBlocks(blocks, manifest.generation()).encode();
            if (ManifestStore.isNewer(manifest, encoded, manifest, candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("no lower-ranked copy in 100 tries");
    }

    @Test
    void aGarbageManifestIsReportedOnceAndRepairAndSweepCarryOn() throws Exception {
        ring = TestingRing.start(3, config(), root);
        Path file = new Path("sr3:///garbage-test/" + UUID.randomUUID() + "/f");
        FileSystem fs = file.getFileSystem();
        byte[] data = bytes(BLOCK * 4);
        write(fs, file, data);
        RingNode node = ring.node(0);
        List<RingNode> survivors = List.of(ring.node(0), ring.node(1));
        for (RingNode survivor : survivors) {
            survivor.store().put("m-0000000000000000-badbadbadbadbad0", "not a manifest".getBytes());
        }
        node.store().put("b-orphan-0", new byte[100]);

        // Repair still restores the factor of the real file, whichever survivor owns its repair.
        ring.node(2).close();
        for (RingNode survivor : survivors) {
            awaitRingSizeSeenBy(survivor, 2);
        }
        for (RingNode survivor : survivors) {
            new ReplicaRepairer(survivor).run();
        }
        for (RingNode survivor : survivors) {
            assertThat(new ReplicaRepairer(survivor).audit()[0]).as("under-replicated blocks seen by %s", survivor)
                    .isZero();
        }
        assertThat(read(fs, file)).isEqualTo(data);

        RingNode restarted = ring.restart(2);
        ring.awaitMembers(3);
        SweepsAGraceApart sweeps = new SweepsAGraceApart(node);
        long corruptBefore = node.metrics().corruptManifests.get();
        sweeps.next();
        sweeps.next();
        assertThat(node.store().contains("b-orphan-0")).as("the sweep carried on past the garbage").isFalse();
        assertThat(node.metrics().corruptManifests.get() - corruptBefore).as("reported once by the sweep").isEqualTo(1);
        assertThat(restarted.isRunning()).isTrue();
        assertThat(read(fs, file)).isEqualTo(data);
    }
}
