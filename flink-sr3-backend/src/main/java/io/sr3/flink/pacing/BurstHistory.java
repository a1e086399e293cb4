package io.sr3.flink.pacing;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * How long the job's input bursts last, learned from its input rate, so that the recovery model
 * can expect a burst to end instead of lasting for the whole recovery.
 *
 * <p>A burst is a run of rate samples above the midpoint between the lowest and the highest rate
 * remembered ({@code sr3.pacing.peak-memory}); it ends at the first sample below. Unlike the
 * input peak, it takes rates measured under back-pressure too: a burst near capacity
 * back-pressures the sources for most of its length, and its samples still say it goes on. A
 * low rate under back-pressure, though, says nothing about the input: the job is not taking it
 * (a checkpoint's pause splits a burst in two otherwise, and the shorter halves would make the
 * forecast expect bursts to end too early). The rate between
 * bursts is the mean of the samples since the previous burst. A restart interrupts a burst, which
 * is then not remembered, and after a restart a burst counts only once the input was quiet (a
 * burst already running when the replay ended has an unknown start).
 */
@NotThreadSafe
final class BurstHistory {

    private record Burst(Instant ended, double seconds) {}

    private final Duration memory;
    private final RateExtreme lowest;
    private final RateExtreme highest;
    private final Deque<Burst> bursts = new ArrayDeque<>();
    @Nullable private Instant burstSince;
    private double quietRateBeforeBurst;
    private double quietSum;
    private int quietSamples;
    /**
     * After a restart, and at the job's start (the sources may start behind), a burst counts only
     * from a rise out of a quiet phase: before that its start is unknown.
     */
    private boolean quietSinceInterrupt;

    BurstHistory(Duration memory) {
        this.memory = memory;
        this.lowest = RateExtreme.lowest(memory);
        this.highest = RateExtreme.highest(memory);
    }

    /**
     * Takes in one rate sample.
     *
     * @param backPressured a subtask was back-pressured: the sources read slower than the input
     *     arrives (a checkpoint's pause in a burst, say), so a low rate then does not end a burst
     */
    void record(Instant now, double rate, boolean backPressured) {
        lowest.record(now, rate);
        highest.record(now, rate);
        double low = lowest.value(now);
        double high = highest.value(now);
        boolean above = high > low && rate > (low + high) / 2;
        if ((above && !quietSinceInterrupt) || (!above && backPressured)) {
            return;
        }
        if (above && burstSince == null) {
            burstSince = now;
            // Without a quiet sample since the last restart, the most the quiet rate can be.
            quietRateBeforeBurst = quietSamples > 0 ? quietSum / quietSamples : (low + high) / 2;
            quietSum = 0;
            quietSamples = 0;
        } else if (!above) {
            quietSinceInterrupt = true;
            if (burstSince != null) {
                bursts.addLast(new Burst(now, seconds(Duration.between(burstSince, now))));
                burstSince = null;
            }
            quietSum += rate;
            quietSamples++;
        }
    }

    /** A restart: the burst in progress, if any, has no known length. */
    void interrupt() {
        burstSince = null;
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
        double longest = 0;
        for (Burst b : bursts) {
            longest = Math.max(longest, b.seconds());
        }
        if (longest <= 0) {
            return null;
        }
        return burstSince == null
                ? new BurstOutlook(longest, false, 0, quietSamples > 0 ? quietSum / quietSamples : 0)
                : new BurstOutlook(longest, true, seconds(Duration.between(burstSince, now)), quietRateBeforeBurst);
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
