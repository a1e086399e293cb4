package io.sr3.flink.restore;

import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Learns each peer's link from the transfers and probes that actually happened, as exponentially
 * weighted moving averages, and turns them into the {@link Link}s the planner needs.
 *
 * <p>Transfers shorter than {@link #MIN_SAMPLE_BYTES} only inform the round trip: their duration
 * is latency, not bandwidth. A peer never observed gets the configured default.
 */
@ThreadSafe
public final class LinkEstimator {

    /** Transfers below this size say nothing about bandwidth. */
    static final long MIN_SAMPLE_BYTES = 64 * 1024;

    private final double weight;
    private final Link defaultLink;
    private final Map<String, Estimate> estimates = new ConcurrentHashMap<>();

    /**
     * @param weight how much a new sample counts, in (0, 1]
     * @param defaultLink what an unobserved peer is assumed to deliver
     */
    public LinkEstimator(double weight, Link defaultLink) {
        if (!(weight > 0 && weight <= 1)) {
            throw new IllegalArgumentException("weight must be in (0, 1], was " + weight);
        }
        this.weight = weight;
        this.defaultLink = defaultLink;
    }

    /** Records a transfer of {@code bytes} from {@code peer} that took {@code elapsed}, request to last byte. */
    public void recordTransfer(String peer, long bytes, Duration elapsed) {
        if (bytes < MIN_SAMPLE_BYTES || elapsed.isZero() || elapsed.isNegative()) {
            return;
        }
        double rate = bytes / (elapsed.toNanos() / 1e9);
        estimates.compute(peer, (p, e) -> (e == null ? new Estimate(Double.NaN, Double.NaN) : e).withRate(rate, weight));
    }

    /** Records a round trip to {@code peer} (a probe, or a tiny request). */
    public void recordRoundTrip(String peer, Duration roundTrip) {
        if (roundTrip.isNegative()) {
            return;
        }
        double seconds = roundTrip.toNanos() / 1e9;
        estimates.compute(peer, (p, e) -> (e == null ? new Estimate(Double.NaN, Double.NaN) : e).withRoundTrip(seconds, weight));
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

    /** Every peer observed so far, with its estimate. */
    public Map<String, Link> links() {
        Map<String, Link> links = new ConcurrentHashMap<>();
        estimates.keySet().forEach(peer -> links.put(peer, link(peer)));
        return Map.copyOf(links);
    }

    private record Estimate(double rate, double roundTrip) {
        Estimate withRate(double sample, double weight) {
            return new Estimate(Double.isNaN(rate) ? sample : rate + weight * (sample - rate), roundTrip);
        }

        Estimate withRoundTrip(double sample, double weight) {
            return new Estimate(rate, Double.isNaN(roundTrip) ? sample : roundTrip + weight * (sample - roundTrip));
        }
    }
}
