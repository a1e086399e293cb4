package io.sr3.flink.restore;

import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Learns each peer's link from the transfers and probes that actually happened, as exponentially
 * weighted moving averages, and turns them into the {@link Link}s the planner needs.
 *
 * <p>Transfers shorter than {@link #MIN_SAMPLE_BYTES} only inform the round trip: their duration
 * is latency, not bandwidth. A peer never observed gets the configured default. Every estimate
 * remembers when it was last measured, for the restore's log line ({@link #source}).
 */
@ThreadSafe
public final class LinkEstimator {

    /** Transfers below this size say nothing about bandwidth. */
    static final long MIN_SAMPLE_BYTES = 64 * 1024;

    private final double weight;
    private final Link defaultLink;
    private final Map<String, Estimate> estimates = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;

    /**
     * @param weight how much a new sample counts, in (0, 1]
     * @param defaultLink what an unobserved peer is assumed to deliver
     */
    public LinkEstimator(double weight, Link defaultLink) {
        this(weight, defaultLink, System::nanoTime);
    }

    LinkEstimator(double weight, Link defaultLink, LongSupplier nanoClock) {
        if (!(weight > 0 && weight <= 1)) {
            throw new IllegalArgumentException("weight must be in (0, 1], was " + weight);
        }
        this.weight = weight;
        this.defaultLink = defaultLink;
        this.nanoClock = nanoClock;
    }

    /** Records a transfer of {@code bytes} from {@code peer} that took {@code elapsed}, request to last byte. */
    public void recordTransfer(String peer, long bytes, Duration elapsed) {
        if (bytes < MIN_SAMPLE_BYTES || elapsed.isZero() || elapsed.isNegative()) {
            return;
        }
        double rate = bytes / (elapsed.toNanos() / 1e9);
        long now = nanoClock.getAsLong();
        estimates.compute(peer, (p, e) -> (e == null ? Estimate.NONE : e).withRate(rate, weight, now));
    }

    /**
     * Records one of {@code concurrent} transfers that shared the link to {@code peer}: the link
     * carried about {@code concurrent} times this one's rate.
     */
    public void recordTransfer(String peer, long bytes, Duration elapsed, int concurrent) {
        if (bytes < MIN_SAMPLE_BYTES || concurrent < 1) {
            return;
        }
        recordTransfer(peer, bytes * concurrent, elapsed);
    }

    /**
     * Replaces the estimate of {@code peer} by {@code link}, measured now: a deliberate
     * measurement (a probe) outranks the moving average of passive samples.
     */
    public void set(String peer, Link link) {
        long now = nanoClock.getAsLong();
        estimates.put(peer, new Estimate(link.bytesPerSecond(), now, link.roundTrip().toNanos() / 1e9, now));
    }

    /** Records a round trip to {@code peer} (a probe, or a tiny request). */
    public void recordRoundTrip(String peer, Duration roundTrip) {
        if (roundTrip.isNegative()) {
            return;
        }
        double seconds = roundTrip.toNanos() / 1e9;
        long now = nanoClock.getAsLong();
        estimates.compute(peer, (p, e) -> (e == null ? Estimate.NONE : e).withRoundTrip(seconds, weight, now));
    }

    /** The current estimate of the link to {@code peer}. */
    public Link link(String peer) {
        Estimate e = estimates.get(peer);
        if (e == null) {
            return defaultLink;
        }
        double rate = Double.isNaN(e.rate) ? defaultLink.bytesPerSecond() : e.rate;
        Duration rtt = Double.isNaN(e.roundTrip) ? defaultLink.roundTrip() : Duration.ofNanos((long) (e.roundTrip * 1e9));
        return new Link(rate, rtt);
    }

    /**
     * Where the link to {@code peer} comes from, for a log line: "rate measured 12 s ago, round
     * trip measured 1 s ago", or "default" for what was never observed.
     */
    public String source(String peer) {
        Estimate e = estimates.getOrDefault(peer, Estimate.NONE);
        long now = nanoClock.getAsLong();
        return "rate " + measured(e.rate, e.rateAtNanos, now) + ", " + roundTripSource(peer);
    }

    /** Where the round trip to {@code peer} comes from: "round trip measured 1 s ago", or "round trip default". */
    public String roundTripSource(String peer) {
        Estimate e = estimates.getOrDefault(peer, Estimate.NONE);
        return "round trip " + measured(e.roundTrip, e.roundTripAtNanos, nanoClock.getAsLong());
    }

    /** {@link #source} of each of {@code peers}. */
    public Map<String, String> sources(Collection<String> peers) {
        Map<String, String> sources = new HashMap<>();
        peers.forEach(peer -> sources.put(peer, source(peer)));
        return sources;
    }

    private static String measured(double value, long atNanos, long now) {
        return Double.isNaN(value) ? "default" : "measured " + Math.max(0, (now - atNanos) / 1_000_000_000L) + " s ago";
    }

    /**
     * How long ago {@code peer}'s rate was last measured (by a transfer or a probe), or empty if
     * it never was and the default stands for it.
     */
    public Optional<Duration> rateAge(String peer) {
        Estimate e = estimates.getOrDefault(peer, Estimate.NONE);
        return Double.isNaN(e.rate) ? Optional.empty()
                : Optional.of(Duration.ofNanos(Math.max(0, nanoClock.getAsLong() - e.rateAtNanos)));
    }

    /** Every peer observed so far, with its estimate. */
    public Map<String, Link> links() {
        Map<String, Link> links = new ConcurrentHashMap<>();
        estimates.keySet().forEach(peer -> links.put(peer, link(peer)));
        return Map.copyOf(links);
    }

    private record Estimate(double rate, long rateAtNanos, double roundTrip, long roundTripAtNanos) {
        static final Estimate NONE = new Estimate(Double.NaN, 0, Double.NaN, 0);

        Estimate withRate(double sample, double weight, long now) {
            return new Estimate(Double.isNaN(rate) ? sample : rate + weight * (sample - rate), now, roundTrip,
                    roundTripAtNanos);
        }

        Estimate withRoundTrip(double sample, double weight, long now) {
            return new Estimate(rate, rateAtNanos, Double.isNaN(roundTrip) ? sample : roundTrip + weight * (sample - roundTrip),
                    now);
        }
    }
}
