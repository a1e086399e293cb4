package io.sr3.flink.node;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;

/**
 * How restores run on this node ({@code sr3.restore.*}): part of {@link NodeConfig}, which
 * carries every setting of this process's node, so it lives here and the restore layer reads it.
 *
 * @param forced the structure to use when it can run ({@code sr3.restore.strategy}), or null for
 *     the planner's choice ({@code auto})
 * @param treeFanIn the most children any node of a tree restore receives from
 * @param maxConcurrentFetches blocks in flight at once towards this node
 * @param prefetchMaxBytes the most bytes a heap-state prefetch may hold in memory; 0 turns it off
 * @param probeInterval how often a storage node measures the link from one of its peers
 *     ({@code sr3.restore.probe-interval}); zero turns the probe off
 */
public record RestoreSettings(@Nullable Structure forced, int treeFanIn, int maxConcurrentFetches, long prefetchMaxBytes,
        Duration probeInterval) {

    /** Own blocks a restore reads at once: as many as the node's I/O threads. */
    public static final int LOCAL_READS_IN_FLIGHT = 4;

    public RestoreSettings {
        if (treeFanIn < 2) {
            throw new IllegalArgumentException("treeFanIn must be >= 2, was " + treeFanIn);
        }
        if (maxConcurrentFetches < 1) {
            throw new IllegalArgumentException("maxConcurrentFetches must be >= 1, was " + maxConcurrentFetches);
        }
        if (prefetchMaxBytes < 0) {
            throw new IllegalArgumentException("prefetchMaxBytes must be >= 0, was " + prefetchMaxBytes);
        }
        Objects.requireNonNull(probeInterval, "probeInterval");
        if (probeInterval.isNegative()) {
            throw new IllegalArgumentException("probeInterval must be >= 0, was " + probeInterval);
        }
    }

    /** Settings with the default prefetch limit and no link probe. */
    public RestoreSettings(@Nullable Structure forced, int treeFanIn, int maxConcurrentFetches) {
        this(forced, treeFanIn, maxConcurrentFetches, DEFAULT_PREFETCH_MAX_BYTES);
    }

    /** Settings without the link probe. */
    public RestoreSettings(@Nullable Structure forced, int treeFanIn, int maxConcurrentFetches, long prefetchMaxBytes) {
        this(forced, treeFanIn, maxConcurrentFetches, prefetchMaxBytes, Duration.ZERO);
    }

    /** The default prefetch limit for heap working state. */
    public static final long DEFAULT_PREFETCH_MAX_BYTES = 256L << 20;

    /** The option defaults: auto, fan-in 2, 8 blocks in flight, 256 MiB of prefetch, no link probe. */
    public static RestoreSettings defaults() {
        return new RestoreSettings(null, 2, 8, DEFAULT_PREFETCH_MAX_BYTES, Duration.ZERO);
    }

    public RestoreSettings withPrefetchMaxBytes(long bytes) {
        return new RestoreSettings(forced, treeFanIn, maxConcurrentFetches, bytes, probeInterval);
    }

    public RestoreSettings withForced(@Nullable Structure structure) {
        return new RestoreSettings(structure, treeFanIn, maxConcurrentFetches, prefetchMaxBytes, probeInterval);
    }

    public RestoreSettings withProbeInterval(Duration interval) {
        return new RestoreSettings(forced, treeFanIn, maxConcurrentFetches, prefetchMaxBytes, interval);
    }

    /** Block buffers a node keeps for its restores: one per fetch in flight and one per own block read at once. */
    public int blockBuffers() {
        return maxConcurrentFetches + LOCAL_READS_IN_FLIGHT;
    }
}
