package io.sr3.flink.fs;

import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingRole;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.ring.Member;
import io.sr3.flink.testing.Deadline;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.testutils.logging.LoggerAuditingExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.event.Level;

import java.io.IOException;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Re-replication after a node loss, on real sockets in one JVM; and client nodes stay out of placement. */
class ReplicaRepairerTest {

    private static final int BLOCK = TestingRing.testConfig().blockSize();

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @RegisterExtension
    final LoggerAuditingExtension readWarnings = new LoggerAuditingExtension(RingStorage.class, Level.WARN);

    @Test
    void survivorsRestoreTheReplicationFactorSoTheNextLossLosesNothing() throws Exception {
        TestingRing ring = rings.start(4, TestingRing.testConfig());
        Path file = new Path("sr3:///repair-test/" + UUID.randomUUID() + "/data");
        FileSystem fs = file.getFileSystem();
        byte[] data = new byte[3 * BLOCK + 17];
        new Random(7).nextBytes(data);
        try (FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE)) {
            out.write(data);
        }
        // Node 0 wrote the file, so it holds the first replica of every block.
        ring.node(0).close();
        List<RingNode> survivors = ring.nodes().subList(1, 4);
        ring.awaitMembers(3);
        List<ReplicaRepairer> repairers = survivors.stream().map(ReplicaRepairer::new).toList();
        // Two rounds, as the maintenance schedule would run them: a node that scanned before the
        // owner of a file repaired it still counts that file's short blocks until its next scan.
        for (int round = 0; round < 2; round++) {
            repairers.forEach(ReplicaRepairer::run);
        }

        long copied = 0;
        for (RingNode node : survivors) {
            assertThat(new ReplicaRepairer(node).audit()[0]).as("under-replicated blocks seen by %s", node).isZero();
            assertThat(node.metrics().underReplicatedBlocks.get()).isZero();
            copied += node.metrics().blocksReReplicated.get();
        }
        assertThat(copied).as("one new replica for each of the 4 blocks").isEqualTo(4);

        // Any second loss now leaves at least one replica of every block and of the manifest.
        for (int victim = 1; victim < 4; victim++) {
            assertThat(readAllWithout(survivors, survivors.get(victim - 1), file, fs)).isEqualTo(data);
        }
    }

    @Test
    void aLostMemberShowsAsPendingRepairAtOnceAndUntilAScanFindsNothingToRepair() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.testConfig());
        Path file = new Path("sr3:///repair-test/" + UUID.randomUUID() + "/data");
        try (FSDataOutputStream out = file.getFileSystem().create(file, WriteMode.NO_OVERWRITE)) {
            out.write(new byte[2 * BLOCK]);
        }
        List<ReplicaRepairer> repairers = new java.util.ArrayList<>();
        for (RingNode node : ring.nodes()) {
            ReplicaRepairer repairer = new ReplicaRepairer(node);
            node.reportRepairPendingFrom(repairer::pending);
            assertThat(node.stats().get("repairPending")).as("before %s's first scan", node).isEqualTo(1L);
            repairer.run();
            assertThat(node.stats().get("repairPending")).as("after %s's first scan", node).isZero();
            repairers.add(repairer);
        }

        ring.node(0).close();
        ring.awaitMembers(2);
        for (int i = 1; i < 3; i++) {
            // No scan has run since the loss: a repair that has not happened must not read as done.
            assertThat(ring.node(i).stats().get("repairPending")).as("%s before its next scan", ring.node(i))
                    .isEqualTo(1L);
        }
        // Two rounds: a node that scans before the owner of a file repaired it counts it until its next scan.
        for (int round = 0; round < 2; round++) {
            repairers.get(1).run();
            repairers.get(2).run();
        }
        for (int i = 1; i < 3; i++) {
            RingNode node = ring.node(i);
            assertThat(node.stats().get("repairPending")).as("%s after a clean scan", node).isZero();
            assertThat(node.metrics().underReplicatedBlocks.get()).isZero();
        }
    }

    @Test
    void aScanThatLeftWorkRunsAgainWhenTheMembersOfTheLastCleanScanAreBack() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.testConfig());
        RingNode owner = ring.node(1);
        ReplicaRepairer repairer = new ReplicaRepairer(owner);
        repairer.run();
        assertThat(repairer.pending()).as("after a clean scan of all three members").isFalse();

        // A file whose only block lives on node 2 alone, described by a manifest on node 1 alone.
        byte[] data = new byte[1000];
        new Random(3).nextBytes(data);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(data);
        ring.node(2).store().put("b-lonely-0", data);
        String path = "/repair-test/" + UUID.randomUUID() + "/lonely";
        Manifest manifest = Manifest.file(path, 1, System.currentTimeMillis(), data.length, List.of(
                new Manifest.BlockRef("b-lonely-0", data.length, (int) crc.getValue(), List.of(ring.node(2).self()))));
        owner.store().put(NamespaceKeys.manifestKey(path), manifest.encode());

        ring.node(2).close();
        ring.awaitMembers(2);
        repairer.run();
        assertThat(owner.metrics().underReplicatedBlocks.get()).as("a block whose only holder is away").isEqualTo(1);

        ring.restart(2);
        ring.awaitMembers(3);
        assertThat(repairer.pending()).as("the same members as the last clean scan, but the last scan left work")
                .isTrue();
        // The scan while node 2 was away copied the manifest to node 0, which may own its repair now.
        List<ReplicaRepairer> others = List.of(new ReplicaRepairer(ring.node(0)), new ReplicaRepairer(ring.node(2)));
        for (int round = 0; round < 2; round++) {
            repairer.run();
            others.forEach(ReplicaRepairer::run);
        }
        assertThat(owner.metrics().underReplicatedBlocks.get()).isZero();
        assertThat(repairer.pending()).isFalse();
    }

    @Test
    void aNodeOutsideTheOwnersViewKeepsScanningUntilTheOwnersRepairReachesItsCopy() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.testConfig());
        String key = storeShortFileOnEveryNode(ring, "short", 5);
        List<Member> order = ring.node(0).membership().ring().successors(key);
        RingNode owner = nodeOf(order.get(0));
        RingNode other = nodeOf(order.get(2));

        ReplicaRepairer otherRepairer = new ReplicaRepairer(other);
        otherRepairer.run();
        assertThat(otherRepairer.pending()).as("a node that does not own the repair of a short file it holds")
                .isTrue();
        new ReplicaRepairer(owner).run();
        otherRepairer.run();
        assertThat(otherRepairer.pending()).isFalse();
        for (RingNode node : ring.nodes()) {
            assertThat(new ReplicaRepairer(node).audit()[0]).as("under-replicated blocks seen by %s", node.self())
                    .isZero();
            assertThat(node.store().get(key)).as("the copy on %s", node.self()).isEqualTo(owner.store().get(key));
        }
    }

    /**
     * A holder of a short file whose owner does not repair it (here: never scans; in a ring, an
     * owner that sees the file at full strength or called its last scan clean) counts it for
     * {@link FileRepair#OWNER_GRACE}, then repairs the file itself.
     */
    @Test
    void aHolderRepairsAShortFileItselfOnceItsOwnerLetItStayShortForTheGracePeriod() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.testConfig());
        String key = storeShortFileOnEveryNode(ring, "idle-owner", 13);
        RingNode other = nodeOf(ring.node(0).membership().ring().successors(key).get(2));
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong();
        ReplicaRepairer repairer = new ReplicaRepairer(other, clock::get);

        repairer.run();
        clock.addAndGet(FileRepair.OWNER_GRACE.toNanos() - 1);
        repairer.run();
        assertThat(other.metrics().underReplicatedBlocks.get()).as("counted while the owner may still repair it")
                .isEqualTo(1);
        assertThat(other.metrics().blocksReReplicated.get()).isZero();

        clock.addAndGet(1);
        repairer.run();
        assertThat(other.metrics().blocksReReplicated.get()).as("copied by the holder after the grace period").isEqualTo(1);
        repairer.run();
        assertThat(repairer.pending()).isFalse();
        for (RingNode node : ring.nodes()) {
            assertThat(new ReplicaRepairer(node).audit()[0]).as("under-replicated blocks seen by %s", node.self())
                    .isZero();
        }
    }

    /**
     * The owner of a file's repair holds an older copy of its manifest than the others (two
     * repairers with different views wrote one generation each, and the newer, short one won
     * elsewhere): the scan that brings the owner's copy up to date must also repair the file, or
     * the owner calls itself clean while every other holder counts the block as short.
     */
    @Test
    void anOwnerWhoseCopyWasStaleRepairsTheNewerCopyInTheSameScan() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.testConfig());
        byte[] data = new byte[1000];
        new Random(9).nextBytes(data);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(data);
        ring.node(0).store().put("b-stale-owner-0", data);
        ring.node(1).store().put("b-stale-owner-0", data);
        String path = "/repair-test/" + UUID.randomUUID() + "/stale-owner";
        String key = NamespaceKeys.manifestKey(path);
        Member gone = new Member("n0000000000000000", "127.0.0.1", 1, "");
        Manifest older = Manifest.file(path, 1, System.currentTimeMillis(), data.length, List.of(new Manifest.BlockRef(
                "b-stale-owner-0", data.length, (int) crc.getValue(), List.of(ring.node(0).self(), ring.node(1).self()))));
        // The newer generation lists one live holder and one that left: short of the factor 2.
        Manifest newerShort = older.withBlocks(List.of(new Manifest.BlockRef("b-stale-owner-0", data.length,
                (int) crc.getValue(), List.of(ring.node(0).self(), gone))), 2);
        List<Member> order = ring.node(0).membership().ring().successors(key);
        RingNode owner = nodeOf(order.get(0));
        for (RingNode node : ring.nodes()) {
            node.store().put(key, (node == owner ? older : newerShort).encode());
        }
        // The owner scans first: the others' reads would bring its copy up to date before its scan.
        ReplicaRepairer ownerRepairer = new ReplicaRepairer(owner);
        ownerRepairer.run();
        List<ReplicaRepairer> others = ring.nodes().stream().filter(n -> n != owner).map(ReplicaRepairer::new).toList();
        others.forEach(ReplicaRepairer::run);
        assertThat(others).as("holders after the owner's scan").noneMatch(ReplicaRepairer::pending);
        assertThat(ownerRepairer.pending()).isFalse();
        for (RingNode node : ring.nodes()) {
            assertThat(new ReplicaRepairer(node).audit()[0]).as("under-replicated blocks seen by %s", node.self())
                    .isZero();
        }
    }

    @Test
    void aFileDeletedWhileItsRepairCopiesBlocksStaysDeleted() throws Exception {
        TestingRing ring = rings.start(4, TestingRing.testConfig());
        Path file = new Path("sr3:///repair-test/" + UUID.randomUUID() + "/deleted-during-repair");
        FileSystem fs = file.getFileSystem();
        byte[] data = new byte[200 * BLOCK];
        new Random(11).nextBytes(data);
        try (FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE)) {
            out.write(data);
        }
        // Node 0 wrote the file and holds a replica of every block: all 200 need a new copy.
        ring.node(0).close();
        List<RingNode> survivors = ring.nodes().subList(1, 4);
        ring.awaitMembers(3);
        List<Thread> scans = new java.util.ArrayList<>();
        for (RingNode node : survivors) {
            Thread scan = new Thread(new ReplicaRepairer(node), "repair-" + node.self().port());
            scan.start();
            scans.add(scan);
        }
        Deadline.poll("the repair to copy a block", TestingRing.AWAIT_TIMEOUT,
                () -> survivors.stream().anyMatch(n -> n.metrics().blocksReReplicated.get() > 0));
        // Flink deletes the file (a subsumed checkpoint) while the repair is still copying its blocks.
        assertThat(fs.delete(file, false)).isTrue();
        for (Thread scan : scans) {
            scan.join(TestingRing.AWAIT_TIMEOUT.toMillis());
            assertThat(scan.isAlive()).as("%s still scanning", scan.getName()).isFalse();
        }

        // The repair read the file before the delete; its rewrite must not bring the file back.
        assertThat(fs.exists(file)).as("the deleted file exists again").isFalse();
        // Copies the delete reached only in the background become tombstones too.
        String key = NamespaceKeys.manifestKey(file.getPath());
        Deadline.poll("every survivor's copy of the manifest to be a tombstone", TestingRing.AWAIT_TIMEOUT,
                () -> survivors.stream().allMatch(node -> isTombstoneOrAbsent(node, key)));
    }

    /**
     * A short block whose only live holder lost it (deleted by hand) is found by a check of its
     * file at the scan after the failed read, not at the regular check ten minutes later: the
     * manifest stops listing that holder and the repair stops asking it.
     */
    @Test
    void aLiveHolderThatLostAShortBlockStopsCountingAtTheNextScan() throws Exception {
        TestingRing ring = rings.start(4, TestingRing.testConfig());
        Path file = new Path("sr3:///repair-test/" + UUID.randomUUID() + "/data");
        Sr3FileSystem fs = (Sr3FileSystem) file.getFileSystem();
        try (FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE)) {
            out.write(new byte[2 * BLOCK]);
        }
        FileBlock block = fs.fileBlocks(file).get(0);
        RingNode writer = ring.node(0); // holds a replica of every block it wrote
        RingNode other = block.holders().stream().filter(m -> !m.sameNode(writer.self())).map(this::nodeOf)
                .findFirst().orElseThrow();
        other.close();
        ring.awaitMembers(3);
        java.nio.file.Files.delete(writer.store().directory().resolve(block.key()));
        // The writer's own repairer runs on its schedule; the others' clocks never reach the regular check.
        List<ReplicaRepairer> repairers = ring.nodes().stream().filter(n -> n != writer && n != other)
                .map(n -> new ReplicaRepairer(n, () -> 0L)).toList();

        Deadline.poll("the manifest to stop listing " + writer.self() + " for " + block.key(), TestingRing.AWAIT_TIMEOUT, () -> {
            repairers.forEach(ReplicaRepairer::run);
            return holdersOfFirstBlock(fs, file).stream().noneMatch(m -> m.sameNode(writer.self()));
        });
        assertThat(fs.fileBlocks(file).get(0).holders()).as("the holder that is away stays listed")
                .singleElement().matches(m -> m.sameNode(other.self()));
        long unusable = readWarnings.getMessages().stream().filter(m -> m.contains(block.key())).count();
        for (int scan = 0; scan < 3; scan++) {
            repairers.forEach(ReplicaRepairer::run);
        }
        assertThat(readWarnings.getMessages().stream().filter(m -> m.contains(block.key())).count())
                .as("reads of the lost replica after the check").isEqualTo(unusable);
    }

    /**
     * Stores a one-block file whose block node 0 holds and a member that left would hold: short
     * of the factor 2; every node holds its manifest. Returns the manifest's key.
     */
    private static String storeShortFileOnEveryNode(TestingRing ring, String name, long seed) throws IOException {
        byte[] data = new byte[1000];
        new Random(seed).nextBytes(data);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(data);
        String block = "b-" + name + "-0";
        ring.node(0).store().put(block, data);
        String path = "/repair-test/" + UUID.randomUUID() + "/" + name;
        Member gone = new Member("n0000000000000000", "127.0.0.1", 1, "");
        Manifest manifest = Manifest.file(path, 1, System.currentTimeMillis(), data.length, List.of(
                new Manifest.BlockRef(block, data.length, (int) crc.getValue(), List.of(ring.node(0).self(), gone))));
        String key = NamespaceKeys.manifestKey(path);
        for (RingNode node : ring.nodes()) {
            node.store().put(key, manifest.encode());
        }
        return key;
    }

    private static List<Member> holdersOfFirstBlock(Sr3FileSystem fs, Path file) {
        try {
            return fs.fileBlocks(file).get(0).holders();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static boolean isTombstoneOrAbsent(RingNode node, String key) {
        try {
            return !node.store().contains(key)
                    || Manifest.decode(node.store().get(key), "copy on " + node.self()).isTombstone();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private RingNode nodeOf(Member member) {
        return rings.ring().nodes().stream().filter(n -> n.self().sameNode(member)).findFirst().orElseThrow();
    }

    /** Reads the file while {@code absent} holds nothing: its blocks are set aside and put back afterwards. */
    private static byte[] readAllWithout(List<RingNode> survivors, RingNode absent, Path file, FileSystem fs)
            throws IOException {
        java.util.Map<String, byte[]> setAside = new java.util.HashMap<>();
        for (String key : absent.store().keys("")) { // blobs only: the node's identity files are not keys
            setAside.put(key, absent.store().get(key));
            absent.store().delete(key);
        }
        try (FSDataInputStream in = fs.open(file)) {
            byte[] read = new byte[(int) fs.getFileStatus(file).getLen()];
            int offset = 0;
            while (offset < read.length) {
                int n = in.read(read, offset, read.length - offset);
                if (n < 0) {
                    break;
                }
                offset += n;
            }
            return read;
        } finally {
            for (java.util.Map.Entry<String, byte[]> e : setAside.entrySet()) {
                absent.store().put(e.getKey(), e.getValue());
            }
            assertThat(survivors).contains(absent);
        }
    }

    @Test
    void clientNodeIsNeverPlacedButReadsAndWritesThroughTheRing() throws Exception {
        TestingRing ring = rings.start(2, TestingRing.testConfig());
        try (RingNode client = RingNode.start(TestingRing.testConfig().withRole(RingRole.CLIENT)
                .withPortAndStore(0, rings.root().resolve("client")))) {
            Deadline.poll("the client to see both nodes", TestingRing.AWAIT_TIMEOUT, () -> client.membership().members().size() == 2);
            List<String> stored = client.storage().writeAndWait("b-client-test-0", new byte[] {1, 2, 3}, true)
                    .stream().map(m -> m.id()).toList();
            assertThat(stored).hasSize(2).doesNotContain(client.self().id());
            assertThat(client.store().bytesStored()).isZero();
            for (RingNode node : ring.nodes()) {
                assertThat(node.membership().members()).as("members seen by %s", node).hasSize(2)
                        .noneMatch(m -> m.sameNode(client.self()));
            }
        }
    }
}
