package io.sr3.flink.pacing;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Recognizes the bursts of a job's input from its rate samples and the sources' record counter,
 * so that the policy keeps checkpoints the bound does not need out of them.
 * <ul>
 *   <li>A burst is a run of samples above the midpoint between the lowest and the highest rate
 *       remembered, when the highest is at least {@value #BURST_CONTRAST} times the lowest (a
 *       steady input's noise is no burst); it ends at the first sample below.
 *   <li>The midpoint comes from rates measured without back-pressure (under back-pressure the
 *       sources read what the job takes, not what arrives); the highest back-pressured rate
 *       counts only when those show no burst. A low back-pressured sample neither ends a burst
 *       nor counts as quiet: a checkpoint's pause must not split a burst in two.
 *   <li>A burst's size is the sources' count from the start of the rate window in which it
 *       crossed the midpoint to its end, in records: what a replay has to work through.
 *   <li>Settling: a sample at least {@value #BURST_CONTRAST} times the quiet rate but below the
 *       midpoint, a burst's first rate window, and the input after a restart until the first
 *       sample are means over a window that still holds other time, so the load measured then
 *       is not what comes.
 *   <li>A restart interrupts a burst, which is then not remembered; a burst already running
 *       after a restart (or at the job's start) has an unknown start and is not learned.
 * </ul>
 */
@NotThreadSafe
final class BurstHistory {

    /** The highest rate must be this many times the lowest for a burst. */
    static final double BURST_CONTRAST = 1.5;

    /** A burst that ended. */
    private record Burst(Instant ended, long records) {}

    /** The sources' record count at a sample. */
    private record Count(Instant at, long records) {}

    private final Duration memory;
    private final Duration rateWindow;
    private final RateExtreme lowest;
    private final RateExtreme highest;
    private final RateExtreme highestBackPressured;
    private final Deque<Burst> bursts = new ArrayDeque<>();
    /** The counts of the last rate window, and the last one before it, oldest first. */
    private final Deque<Count> counts = new ArrayDeque<>();
    private boolean inBurst;
    private long burstStartRecords;
    /** Whether the current burst began after a quiet sample of this attempt, so that its size can be learned. */
    private boolean burstStartKnown;
    private double quietRateBeforeBurst;
    private double quietSum;
    private int quietSamples;
    /**
     * The mean rate of the last quiet phase with samples, kept across restarts (the rate between
     * bursts is the input's, not an attempt's); NaN before the first.
     */
    private double lastQuietRate = Double.NaN;
    /** Whether a quiet sample came since the last restart (or the job's start). */
    private boolean quietSinceInterrupt;
    /** When the current burst's first sample came. */
    private Instant burstSeenAt = Instant.MIN;
    /** Whether the input is settling (see the class comment), by the last sample or since a restart. */
    private boolean settling;

    /**
     * @param memory how long bursts and rate extremes are remembered
     * @param rateWindow the window over which each rate sample is a mean
     */
    BurstHistory(Duration memory, Duration rateWindow) {
        this.memory = memory;
        this.rateWindow = rateWindow;
        this.lowest = RateExtreme.lowest(memory);
        this.highest = RateExtreme.highest(memory);
        this.highestBackPressured = RateExtreme.highest(memory);
    }

    /**
     * Takes in one rate sample.
     *
     * @param backPressured a subtask was back-pressured: the sources read slower than the input
     *     arrives (a checkpoint's pause in a burst, say), so a low rate then does not end a burst
     * @param sourceRecords the records the sources read since their attempt started; a count
     *     lower than the last one is a new attempt, as {@link #interrupt()}
     */
    void record(Instant now, double rate, boolean backPressured, long sourceRecords) {
        if (!counts.isEmpty() && sourceRecords < counts.peekLast().records()) {
            interrupt();
        }
        counts.addLast(new Count(now, sourceRecords));
        Instant windowStart = now.minus(rateWindow);
        while (counts.size() > 1) {
            Count oldest = counts.pollFirst();
            if (counts.peekFirst().at().isAfter(windowStart)) {
                counts.addFirst(oldest); // the last count at or before the window's start stays
                break;
            }
        }
        if (backPressured) {
            highestBackPressured.record(now, rate);
        } else {
            lowest.record(now, rate);
            highest.record(now, rate);
        }
        double low = lowest.value(now);
        double highFree = highest.value(now);
        double high = showsBursts(low, highFree) ? highFree : highestBackPressured.value(now);
        boolean above = showsBursts(low, high) && rate > (low + high) / 2;
        if (!above && backPressured) {
            return;
        }
        settling = above
                ? !inBurst || now.isBefore(burstSeenAt.plus(rateWindow))
                : !inBurst && rate >= BURST_CONTRAST * quietRateSoFar();
        if (above && !inBurst) {
            inBurst = true;
            burstSeenAt = now;
            burstStartKnown = quietSinceInterrupt;
            // A burst of unknown start (already running when the replay ended) is taken as starting
            // now: the forecast then expects all of the largest burst's records still to come.
            burstStartRecords = burstStartKnown ? counts.peekFirst().records() : sourceRecords;
            // Without a quiet sample since the last restart, the quiet rate of before it; without
            // any, the most the quiet rate can be.
            rememberQuietRate();
            quietRateBeforeBurst = Double.isNaN(lastQuietRate) ? (low + high) / 2 : lastQuietRate;
            quietSum = 0;
            quietSamples = 0;
        } else if (!above) {
            quietSinceInterrupt = true;
            if (inBurst && burstStartKnown) {
                bursts.addLast(new Burst(now, sourceRecords - burstStartRecords));
            }
            inBurst = false;
            quietSum += rate;
            quietSamples++;
        }
    }

    private void rememberQuietRate() {
        if (quietSamples > 0) {
            lastQuietRate = quietSum / quietSamples;
        }
    }

    /**
     * The mean rate of this quiet phase; before its first sample (right after a restart), that of
     * the last quiet phase; infinite before any.
     */
    private double quietRateSoFar() {
        if (quietSamples > 0) {
            return quietSum / quietSamples;
        }
        return Double.isNaN(lastQuietRate) ? Double.POSITIVE_INFINITY : lastQuietRate;
    }

    private static boolean showsBursts(double low, double high) {
        return high > low && high >= BURST_CONTRAST * low;
    }

    /**
     * A rate measured after a replay ended, which is not learned from: whether the input is
     * settling, by the test of a sample outside a burst (at least {@value #BURST_CONTRAST} times
     * the rate between bursts, that of the last quiet phase right after a restart).
     */
    void judgeSettling(double rate) {
        if (!inBurst) {
            settling = rate >= BURST_CONTRAST * quietRateSoFar();
        }
    }

    /** A restart: the burst in progress, if any, has no known size, and the count starts again. */
    void interrupt() {
        rememberQuietRate();
        inBurst = false;
        // Until the next sample: the rates since the restart are the replay's, not the input's.
        settling = true;
        counts.clear();
        quietSinceInterrupt = false;
        quietSum = 0;
        quietSamples = 0;
    }

    /** What the remembered bursts say, or null when none ended within the memory. */
    @Nullable
    BurstOutlook outlook(Instant now) {
        Instant oldest = now.minus(memory);
        while (!bursts.isEmpty() && bursts.peekFirst().ended().isBefore(oldest)) {
            bursts.pollFirst();
        }
        Burst largest = null;
        for (Burst b : bursts) {
            if (largest == null || b.records() > largest.records()) {
                largest = b;
            }
        }
        if (largest == null || largest.records() <= 0) {
            return null;
        }
        return !inBurst
                ? new BurstOutlook(largest.records(), false, 0, quietSamples > 0 ? quietSum / quietSamples : 0, settling)
                : new BurstOutlook(largest.records(), true, counts.peekLast().records() - burstStartRecords,
                        quietRateBeforeBurst, settling);
    }
}
