package io.sr3.flink.node;

import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.store.CorruptBlockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.function.LongSupplier;

/**
 * Verifies every block of one node's store, slowly: the local half of finding lost replicas
 * (the other half is replica repair's presence check, which asks holders about block headers).
 *
 * <p>Runs on the node's maintenance thread every {@link #TICK}, each run reading blocks until it
 * has spent the bytes {@code sr3.scrub.bandwidth} allows for the time since the last run (at most
 * one tick's worth, so a run delayed by other maintenance does not catch up in a burst; a block
 * larger than a tick's budget puts the scrubber in debt for the ticks that follow). A pass lists
 * the store's keys once and walks them; a new pass starts {@code sr3.scrub.interval} after the
 * previous one started, or at once if that one took longer.
 *
 * <p>A block that fails verification (its header, its length against the file's, the CRC32C of
 * its data) is moved aside by {@link BlockStore#quarantineIfCorrupt}, which verifies it again
 * under the key's lock so a block replaced meanwhile is never moved; it is logged at WARN with
 * its key, file and reason and counted in {@link NodeMetrics#corruptBlocksFound}. From then on
 * the node answers that it does not hold the block, so reads go to another replica and the
 * repairing node of its file re-creates it at its next check. A read that fails for another
 * reason (an I/O error) is logged, never acted on, and tried again in the next pass. (A peer's
 * {@code GET_BLOCK} that finds a block damaged moves it aside at once, the same way.)
 */
@NotThreadSafe
public final class BlockScrubber implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(BlockScrubber.class);
    public static final String TASK_NAME = "block-scrub";
    /** How often the scrubber runs; each run reads about one tick's share of the bandwidth. */
    public static final Duration TICK = Duration.ofSeconds(1);

    private final RingNode node;
    private final long bytesPerSecond;
    private final long intervalNanos;
    private final LongSupplier nanoClock;
    /** Keys of the pass in progress; null between passes. */
    private Iterator<String> pass;
    private long passStartedNanos;
    private boolean passed;
    private long lastRunNanos;
    /** Bytes this run may still read; negative after a block larger than the budget. */
    private long credit;
    private long passBlocks;
    private long passBytes;
    private long passCorrupt;

    /** A scrubber at {@code sr3.scrub.bandwidth} and {@code sr3.scrub.interval} of the node's configuration. */
    public BlockScrubber(RingNode node) {
        this(node, node.config().durability().scrubBandwidth(), node.config().durability().scrubInterval(),
                System::nanoTime);
    }

    BlockScrubber(RingNode node, long bytesPerSecond, Duration interval, LongSupplier nanoClock) {
        if (bytesPerSecond < 1) {
            throw new IllegalArgumentException("bytesPerSecond must be positive, was " + bytesPerSecond);
        }
        this.node = node;
        this.bytesPerSecond = bytesPerSecond;
        this.intervalNanos = interval.toNanos();
        this.nanoClock = nanoClock;
        this.lastRunNanos = nanoClock.getAsLong() - TICK.toNanos();
    }

    @Override
    public void run() {
        long now = nanoClock.getAsLong();
        long tickBudget = Math.max(1, bytesPerSecond * TICK.toMillis() / 1000);
        long earned = (long) (bytesPerSecond * ((now - lastRunNanos) / 1e9));
        credit = Math.min(tickBudget, credit + Math.max(0, earned));
        lastRunNanos = now;
        if (credit <= 0) {
            return;
        }
        if (pass == null) {
            if (passed && now - passStartedNanos < intervalNanos) {
                return;
            }
            try {
                pass = node.store().keys("").iterator();
            } catch (IOException e) {
                LOG.warn("[{}] scrub could not list the store {}: {}; trying again", node.self().id(),
                        node.store().directory(), e.toString());
                return;
            }
            passStartedNanos = now;
            passBlocks = 0;
            passBytes = 0;
            passCorrupt = 0;
        }
        while (credit > 0 && pass.hasNext() && node.isRunning()) {
            credit -= verify(pass.next());
        }
        if (!pass.hasNext()) {
            pass = null;
            passed = true;
            LOG.info("[{}] scrub pass over {} block(s), {} bytes, in {} s: {} corrupt", node.self().id(), passBlocks,
                    passBytes, (now - passStartedNanos) / 1_000_000_000L, passCorrupt);
        }
    }

    /** Verifies one block; returns the bytes it read. */
    private long verify(String key) {
        long size = node.store().sizeOnDisk(key);
        try {
            node.store().read(key);
        } catch (BlockNotFoundException e) {
            return 0; // deleted since the pass listed it
        } catch (CorruptBlockException | java.io.EOFException e) {
            quarantine(key, e.getMessage());
        } catch (IOException e) {
            LOG.warn("[{}] scrub could not read block {} ({}): {}; it stays, and is read again in the next pass",
                    node.self().id(), key, node.store().directory().resolve(key), e.toString());
        }
        passBlocks++;
        passBytes += size;
        node.metrics().blocksScrubbed.incrementAndGet();
        node.metrics().bytesScrubbed.addAndGet(size);
        return Math.max(1, size);
    }

    private void quarantine(String key, String firstFailure) {
        String why;
        try {
            why = node.store().quarantineIfCorrupt(key);
        } catch (IOException e) {
            LOG.warn("[{}] scrub found block {} ({}) corrupt ({}) but could not move it aside: {}", node.self().id(),
                    key, node.store().directory().resolve(key), firstFailure, e.toString());
            return;
        }
        if (why == null) {
            return; // replaced or deleted since the first read: the block there now is intact
        }
        passCorrupt++;
        node.metrics().corruptBlocksFound.incrementAndGet();
        LOG.warn("[{}] scrub: block {} in file {} is corrupt ({}); moved to {}. It is never served again; replica "
                + "repair re-creates it from an intact replica", node.self().id(), key,
                node.store().directory().resolve(key), why, node.store().quarantined(key));
    }
}
