package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Orphaned blocks are swept after the grace period; referenced and young blocks stay; full stores spill or fail cleanly. */
class OrphanSweeperTest {

    private static final Duration GRACE = Duration.ofMinutes(10);

    @TempDir java.nio.file.Path root;

    private TestingRing ring;

    @AfterEach
    void stop() {
        if (ring != null) {
            ring.close();
        }
    }

    @Test
    void sweepsOnlyOldBlocksThatNoManifestReferences() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig().withStoreLimits(Long.MAX_VALUE, GRACE), root);
        Path file = new Path("sr3:///sweep-test/" + UUID.randomUUID());
        FileSystem fs = file.getFileSystem();
        byte[] data = new byte[2 * TestingRing.testConfig().blockSize() + 5];
        new Random(3).nextBytes(data);
        try (FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE)) {
            out.write(data);
        }
        RingNode node = ring.node(1);
        node.store().put("b-orphan-0", new byte[1000]);
        long storedBefore = node.store().bytesStored();

        AtomicLong wallMillis = new AtomicLong(System.currentTimeMillis());
        AtomicLong nanos = new AtomicLong(0);
        List<OrphanSweeper> sweepers = new ArrayList<>();
        for (RingNode n : ring.nodes()) {
            sweepers.add(new OrphanSweeper(n, wallMillis::get, nanos::get));
        }
        nanos.set(GRACE.toNanos()); // every node has been up for a grace period
        assertThat(sweepers.get(1).sweep()).as("nothing is older than the grace period yet").isZero();
        wallMillis.addAndGet(GRACE.toMillis() + 1000);
        long swept = 0;
        for (OrphanSweeper sweeper : sweepers) {
            swept += sweeper.sweep();
        }
        assertThat(swept).as("a first sighting deletes nothing").isZero();
        assertThat(node.store().contains("b-orphan-0")).isTrue();
        wallMillis.addAndGet(GRACE.toMillis());
        nanos.addAndGet(GRACE.toNanos());
        for (OrphanSweeper sweeper : sweepers) {
            swept += sweeper.sweep();
        }
        assertThat(swept).as("only the orphan goes, at the second sweep that finds it unreferenced").isEqualTo(1);
        assertThat(node.store().contains("b-orphan-0")).isFalse();
        assertThat(node.store().bytesStored()).isLessThan(storedBefore);
        assertThat(node.metrics().orphanBlocksSwept.get()).isEqualTo(1);
        try (FSDataInputStream in = fs.open(file)) {
            byte[] read = new byte[data.length];
            int offset = 0;
            while (offset < read.length) {
                int n = in.read(read, offset, read.length - offset);
                assertThat(n).isPositive();
                offset += n;
            }
            assertThat(read).isEqualTo(data);
        }
    }

    @Test
    void aNodeUpForLessThanTheGracePeriodDeletesNothing() throws Exception {
        ring = TestingRing.start(2, TestingRing.testConfig().withStoreLimits(Long.MAX_VALUE, GRACE), root);
        RingNode node = ring.node(1);
        node.store().put("b-orphan-0", new byte[10]);
        AtomicLong wallMillis = new AtomicLong(System.currentTimeMillis() + 10 * GRACE.toMillis());
        OrphanSweeper sweeper = new OrphanSweeper(node, wallMillis::get, () -> 0);
        assertThat(sweeper.sweep() + sweeper.sweep()).isZero();
        assertThat(node.store().contains("b-orphan-0")).as("start-up safemode").isTrue();
    }

    @Test
    void aWriteThatFitsNowhereFailsNamingTheFullStoresAndPublishesNothing() throws Exception {
        int block = TestingRing.testConfig().blockSize();
        ring = TestingRing.start(3, TestingRing.testConfig().withStoreLimits(2L * block, GRACE), root);
        Path small = new Path("sr3:///full-test/" + UUID.randomUUID() + "/small");
        FileSystem fs = small.getFileSystem();
        try (FSDataOutputStream out = fs.create(small, WriteMode.NO_OVERWRITE)) {
            out.write(new byte[block]); // one block per node on two nodes: fits
        }
        Path big = new Path(small.getParent(), "big");
        assertThatThrownBy(() -> {
            try (FSDataOutputStream out = fs.create(big, WriteMode.NO_OVERWRITE)) {
                out.write(new byte[4 * block]);
            }
        }).isInstanceOf(IOException.class).hasMessageContaining("sr3.store.max-size");
        assertThat(fs.exists(big)).as("a failed file is never visible").isFalse();
        assertThat(fs.exists(small)).isTrue();
    }
}
