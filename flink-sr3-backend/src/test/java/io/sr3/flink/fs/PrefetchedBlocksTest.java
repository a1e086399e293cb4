package io.sr3.flink.fs;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The prefetch cache with a hand-moved clock: handed out once, dropped when nobody reads it. */
class PrefetchedBlocksTest {

    private final AtomicLong nanos = new AtomicLong();
    private final PrefetchedBlocks cache = new PrefetchedBlocks(nanos::get);

    @Test
    void eachBlockIsHandedOutOnce() {
        cache.put("b-1", new byte[10]);
        cache.put("b-2", new byte[5]);
        assertThat(cache.bytes()).isEqualTo(15);

        assertThat(cache.take("b-1")).hasSize(10);
        assertThat(cache.take("b-1")).isNull();
        assertThat(cache.bytes()).isEqualTo(5);
    }

    @Test
    void blocksNobodyReadsExpire() {
        cache.put("b-old", new byte[10]);
        nanos.addAndGet(PrefetchedBlocks.TIME_TO_LIVE.toNanos() + 1);
        cache.put("b-new", new byte[3]); // puts sweep what expired

        assertThat(cache.take("b-old")).isNull();
        assertThat(cache.take("b-new")).hasSize(3);
        assertThat(cache.bytes()).isZero();
    }
}
