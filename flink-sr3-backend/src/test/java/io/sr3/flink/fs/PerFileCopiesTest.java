package io.sr3.flink.fs;

import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.ring.Member;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A file that asks for its own number of copies (its operator's replication plan) gets them when
 * written, keeps them through repair, and leaves other files at the replication factor; on real
 * sockets in one JVM, replication factor 2.
 */
class PerFileCopiesTest {

    private static final int BLOCK = TestingRing.testConfig().blockSize();

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @Test
    void aFileWrittenWithThreeCopiesHasThreeHoldersPerBlockAndItsManifestOnThreeNodes() throws Exception {
        rings.start(4, TestingRing.testConfig());
        Sr3FileSystem fs = (Sr3FileSystem) new Path("sr3:///").getFileSystem();
        Path costly = write(fs, "costly", 3);
        Path plain = write(fs, "plain", Manifest.RING_DEFAULT);

        assertThat(fs.fileBlocks(costly)).hasSize(3).allSatisfy(b -> assertThat(b.holders()).hasSize(3));
        assertThat(fs.fileBlocks(plain)).hasSize(3).allSatisfy(b -> assertThat(b.holders()).hasSize(2));
        assertThat(fs.getFileStatus(costly).getReplication()).isEqualTo((short) 3);
        assertThat(fs.getFileStatus(plain).getReplication()).isEqualTo((short) 2);
        assertThat(manifestCopies(costly)).as("nodes holding the manifest of the 3-copy file").isEqualTo(3);
        assertThat(manifestCopies(plain)).isEqualTo(2);
    }

    @Test
    void repairBringsEachFileBackToItsOwnCopiesAfterANodeLoss() throws Exception {
        TestingRing ring = rings.start(5, TestingRing.testConfig());
        Sr3FileSystem fs = (Sr3FileSystem) new Path("sr3:///").getFileSystem();
        Path costly = write(fs, "costly", 3);
        Path plain = write(fs, "plain", Manifest.RING_DEFAULT);

        // Node 0 wrote both files, so it holds the first replica of every block.
        ring.node(0).close();
        ring.awaitMembers(4);
        List<RingNode> survivors = ring.nodes().subList(1, 5);
        List<ReplicaRepairer> repairers = survivors.stream().map(ReplicaRepairer::new).toList();
        for (int round = 0; round < 2; round++) {
            repairers.forEach(ReplicaRepairer::run);
        }
        for (RingNode node : survivors) {
            assertThat(new ReplicaRepairer(node).audit()[0]).as("under-replicated blocks seen by %s", node).isZero();
        }
        RingNode observer = survivors.get(0);
        assertThat(liveHolders(fs, observer, costly)).as("live holders per block of the 3-copy file").containsOnly(3);
        assertThat(liveHolders(fs, observer, plain)).as("live holders per block of the plain file").containsOnly(2);
    }

    @Test
    void copiesOutsideTheManifestRangeAreRefusedBeforeAnythingIsWritten() throws Exception {
        rings.start(2, TestingRing.testConfig());
        Sr3FileSystem fs = (Sr3FileSystem) new Path("sr3:///").getFileSystem();
        Path path = new Path("sr3:///copies-test/" + UUID.randomUUID() + "/refused");
        assertThatThrownBy(() -> fs.create(path, WriteMode.NO_OVERWRITE, 256))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was 256");
        assertThatThrownBy(() -> fs.create(path, WriteMode.NO_OVERWRITE, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(fs.exists(path)).isFalse();
    }

    private Path write(Sr3FileSystem fs, String name, int copies) throws IOException {
        Path path = new Path("sr3:///copies-test/" + UUID.randomUUID() + "/" + name);
        byte[] data = new byte[2 * BLOCK + 99];
        new Random(name.hashCode()).nextBytes(data);
        try (FSDataOutputStream out = fs.create(path, WriteMode.NO_OVERWRITE, copies)) {
            out.write(data);
        }
        return path;
    }

    private int manifestCopies(Path path) throws IOException {
        String key = NamespaceKeys.manifestKey(path.toUri().getPath());
        int holders = 0;
        for (RingNode node : rings.ring().nodes()) {
            if (node.isRunning() && node.store().contains(key)) {
                holders++;
            }
        }
        return holders;
    }

    private static List<Integer> liveHolders(Sr3FileSystem fs, RingNode observer, Path path) throws IOException {
        List<Integer> counts = new ArrayList<>();
        for (FileBlock block : fs.fileBlocks(path)) {
            int live = 0;
            for (Member holder : block.holders()) {
                if (observer.membership().isLive(holder)) {
                    live++;
                }
            }
            counts.add(live);
        }
        return counts;
    }
}
