package io.sr3.flink.node;

import io.sr3.flink.store.BlockNotFoundException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The scrubber's pace and passes, on a real node's store with a clock the test moves. */
class BlockScrubberTest {

    private static final int BLOCK = 64 * 1024;
    private static final long SECOND = Duration.ofSeconds(1).toNanos();

    @TempDir Path root;

    private TestingRing ring;
    private RingNode node;
    private final AtomicLong clock = new AtomicLong(1_000 * SECOND);

    @BeforeEach
    void startANodeWithTenBlocks() throws Exception {
        ring = TestingRing.start(1, TestingRing.testConfig(), root);
        node = ring.node(0);
        for (int i = 0; i < 10; i++) {
            node.store().put("b-scrub-" + i, new byte[BLOCK]);
        }
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    @Test
    void readsNoMoreThanItsBandwidthAndStartsAPassOncePerInterval() {
        long blockOnDisk = node.store().sizeOnDisk("b-scrub-0");
        // Two blocks' worth per second.
        BlockScrubber scrubber = new BlockScrubber(node, 2 * blockOnDisk, Duration.ofHours(1), clock::get);
        for (int second = 1; second <= 3; second++) {
            scrubber.run();
            assertThat(node.metrics().blocksScrubbed.get()).as("blocks verified after %d s", second)
                    .isEqualTo(2L * second);
            clock.addAndGet(SECOND);
        }
        // Runs closer together than a second earn less, and no run catches up on time it missed.
        clock.addAndGet(-SECOND / 2);
        scrubber.run();
        assertThat(node.metrics().blocksScrubbed.get()).isEqualTo(7);
        clock.addAndGet(60 * SECOND);
        scrubber.run();
        assertThat(node.metrics().blocksScrubbed.get()).as("at most a second's worth after a long pause")
                .isEqualTo(9);
        clock.addAndGet(SECOND);
        scrubber.run(); // the last block ends the pass
        assertThat(node.metrics().blocksScrubbed.get()).isEqualTo(10);
        for (int i = 0; i < 5; i++) {
            clock.addAndGet(SECOND);
            scrubber.run();
        }
        assertThat(node.metrics().blocksScrubbed.get()).as("no second pass within the interval").isEqualTo(10);
        clock.addAndGet(Duration.ofHours(1).toNanos());
        scrubber.run();
        assertThat(node.metrics().blocksScrubbed.get()).as("the next pass after the interval").isEqualTo(12);
        assertThat(node.metrics().corruptBlocksFound.get()).isZero();
    }

    @Test
    void aBlockLargerThanOneSecondsBudgetIsReadAndPaidForOverTheFollowingSeconds() {
        long blockOnDisk = node.store().sizeOnDisk("b-scrub-0");
        BlockScrubber scrubber = new BlockScrubber(node, blockOnDisk / 4, Duration.ofHours(1), clock::get);
        scrubber.run();
        assertThat(node.metrics().blocksScrubbed.get()).isEqualTo(1);
        for (int second = 1; second <= 3; second++) {
            clock.addAndGet(SECOND);
            scrubber.run();
            assertThat(node.metrics().blocksScrubbed.get()).as("in debt after %d s", second).isEqualTo(1);
        }
        clock.addAndGet(SECOND); // a quarter of a block per second: four seconds paid for it
        scrubber.run();
        assertThat(node.metrics().blocksScrubbed.get()).isEqualTo(2);
    }

    @Test
    void aDamagedHeaderAndATruncatedFileAreMovedAsideAndAnIntactBlockStays() throws Exception {
        Path damaged = node.store().directory().resolve("b-scrub-3");
        try (RandomAccessFile raf = new RandomAccessFile(damaged.toFile(), "rw")) {
            raf.seek(0);
            raf.write('X'); // the magic
        }
        Path truncated = node.store().directory().resolve("b-scrub-7");
        try (RandomAccessFile raf = new RandomAccessFile(truncated.toFile(), "rw")) {
            raf.setLength(raf.length() - 1);
        }
        long before = node.store().bytesStored();
        BlockScrubber scrubber = new BlockScrubber(node, 1L << 30, Duration.ofHours(1), clock::get);
        scrubber.run();

        assertThat(node.metrics().corruptBlocksFound.get()).isEqualTo(2);
        assertThat(node.store().keys("")).hasSize(8).doesNotContain("b-scrub-3", "b-scrub-7");
        assertThat(Files.exists(node.store().quarantined("b-scrub-3"))).isTrue();
        assertThat(Files.exists(node.store().quarantined("b-scrub-7"))).isTrue();
        assertThatThrownBy(() -> node.store().get("b-scrub-3")).isInstanceOf(BlockNotFoundException.class);
        assertThat(node.store().bytesStored()).as("moved-aside bytes no longer count")
                .isLessThan(before - BLOCK);
        assertThat(node.store().get("b-scrub-4")).hasSize(BLOCK);
    }
}
