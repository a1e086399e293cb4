package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Verified blocks a restore plan brought to this process before Flink reads them (heap working
 * state reads its files through {@link Sr3InputStream}). Each block is handed out once, then
 * forgotten: a second read of it goes to the ring as usual. Blocks nobody reads within
 * {@link #TIME_TO_LIVE} (a restore that failed over to another attempt) are dropped, so memory is
 * bounded by what the running restores prefetched.
 */
@ThreadSafe
final class PrefetchedBlocks {

    static final Duration TIME_TO_LIVE = Duration.ofMinutes(2);
    private static final Duration SWEEP_INTERVAL = Duration.ofSeconds(1);

    private final Map<String, Entry> blocks = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    private final LongSupplier nanoClock;
    private volatile long nextSweepNanos = Long.MIN_VALUE;

    /** The blocks prefetched through {@code node}: one set per node, so per process in a TaskManager. */
    static PrefetchedBlocks of(RingNode node) {
        return node.attachment(PrefetchedBlocks.class, n -> new PrefetchedBlocks(System::nanoTime));
    }

    PrefetchedBlocks(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    void put(String key, byte[] data) {
        dropExpired();
        Entry previous = blocks.put(key, new Entry(data, nanoClock.getAsLong() + TIME_TO_LIVE.toNanos()));
        bytes.addAndGet(data.length - (previous == null ? 0 : previous.data.length));
    }

    /** The block if it was prefetched and not taken yet; removes it. */
    @Nullable
    byte[] take(String key) {
        Entry entry = blocks.remove(key);
        if (entry == null) {
            return null;
        }
        bytes.addAndGet(-entry.data.length);
        return entry.data;
    }

    /** Whether the block was prefetched and not taken yet. */
    boolean contains(String key) {
        return blocks.containsKey(key);
    }

    long bytes() {
        return bytes.get();
    }

    /** At most once per second: a prefetch puts thousands of blocks in a row. */
    private void dropExpired() {
        long now = nanoClock.getAsLong();
        if (nextSweepNanos != Long.MIN_VALUE && now - nextSweepNanos < 0) {
            return;
        }
        nextSweepNanos = now + SWEEP_INTERVAL.toNanos();
        blocks.entrySet().removeIf(e -> {
            boolean expired = e.getValue().expiresAtNanos - now < 0;
            if (expired) {
                bytes.addAndGet(-e.getValue().data.length);
            }
            return expired;
        });
    }

    private record Entry(byte[] data, long expiresAtNanos) {}
}
