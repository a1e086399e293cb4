package io.sr3.flink.restore;

import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Learns each peer's link from the transfers and probes that actually happened and turns them into
 * the {@link Link}s the planner needs.
 *
 * <p>A link's rate is the highest rate a transfer achieved within a window ({@link #DEFAULT_WINDOW}
 * in the nodes), the way BBR estimates a path's bandwidth. A passive sample is what a transfer
 * delivered while the link also carried other traffic, the job competed for the CPU and the
 * receiver wrote to its disk: it can fall far below what the link carries, hardly above. An
 * average of such samples plans a restore, which has the link to itself, on a fraction of it;
 * the maximum does not. Samples older than the window are forgotten, so a link that got slower
 * shows within the window; the latest sample stands once every sample is older. A probe
 * ({@link #set}) replaces what was learned. Round trips are a moving average.
 *
 * <p>Transfers shorter than {@link #MIN_SAMPLE_BYTES} are not samples. A peer never observed gets
 * the configured default. Every estimate remembers when it was last measured, for the restore's
 * log line ({@link #source}).
 */
@ThreadSafe
public final class LinkEstimator {

    /**
     * Transfers below this size say nothing about bandwidth: their time is mostly fixed costs on a
     * fast link, and mostly a shaper's burst allowance on a slow one.
     */
    static final long MIN_SAMPLE_BYTES = 1024 * 1024;

    /** How much a new round trip counts in the moving average. */
    private static final double ROUND_TRIP_WEIGHT = 0.3;

    /** How long a rate sample counts towards the link's estimate. */
    public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(10);

    private final long windowNanos;
    private final Link defaultLink;
    private final Map<String, Estimate> estimates = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;

    /**
     * @param window how long a rate sample counts towards the estimate
     * @param defaultLink what an unobserved peer is assumed to deliver
     */
    public LinkEstimator(Duration window, Link defaultLink) {
        this(window, defaultLink, System::nanoTime);
    }

    LinkEstimator(Duration window, Link defaultLink, LongSupplier nanoClock) {
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be positive, was " + window);
        }
        this.windowNanos = window.toNanos();
        this.defaultLink = defaultLink;
        this.nanoClock = nanoClock;
    }

    /** Records a transfer of {@code bytes} from {@code peer} that took {@code elapsed}, request to last byte. */
    public void recordTransfer(String peer, long bytes, Duration elapsed) {
        if (bytes < MIN_SAMPLE_BYTES || elapsed.isZero() || elapsed.isNegative()) {
            return;
        }
        double rate = bytes / (elapsed.toNanos() / 1e9);
        estimate(peer).addRate(rate, nanoClock.getAsLong(), windowNanos);
    }

    /**
     * Replaces the estimate of {@code peer} by {@code link}, measured now: a deliberate
     * measurement (a probe) outranks the passive samples before it.
     */
    public void set(String peer, Link link) {
        estimate(peer).set(link.bytesPerSecond(), link.roundTrip().toNanos() / 1e9, nanoClock.getAsLong());
    }

    /** Records a round trip to {@code peer} (a probe, or a tiny request). */
    public void recordRoundTrip(String peer, Duration roundTrip) {
        if (roundTrip.isNegative()) {
            return;
        }
        estimate(peer).addRoundTrip(roundTrip.toNanos() / 1e9, nanoClock.getAsLong());
    }

    /** The current estimate of the link to {@code peer}. */
    public Link link(String peer) {
        Estimate e = estimates.get(peer);
        if (e == null) {
            return defaultLink;
        }
        double rate = e.rate(nanoClock.getAsLong(), windowNanos);
        double roundTrip = e.roundTrip();
        return new Link(Double.isNaN(rate) ? defaultLink.bytesPerSecond() : rate,
                Double.isNaN(roundTrip) ? defaultLink.roundTrip() : Duration.ofNanos((long) (roundTrip * 1e9)));
    }

    /**
     * Where the link to {@code peer} comes from, for a log line: "rate measured 12 s ago, round
     * trip measured 1 s ago", or "default" for what was never observed.
     */
    public String source(String peer) {
        return "rate " + measured(rateAge(peer)) + ", " + roundTripSource(peer);
    }

    /** Where the round trip to {@code peer} comes from: "round trip measured 1 s ago", or "round trip default". */
    public String roundTripSource(String peer) {
        Estimate e = estimates.get(peer);
        return "round trip " + measured(e == null ? Optional.empty() : e.roundTripAge(nanoClock.getAsLong()));
    }

    /** {@link #source} of each of {@code peers}. */
    public Map<String, String> sources(Collection<String> peers) {
        Map<String, String> sources = new HashMap<>();
        peers.forEach(peer -> sources.put(peer, source(peer)));
        return sources;
    }

    private static String measured(Optional<Duration> age) {
        return age.map(a -> "measured " + a.toSeconds() + " s ago").orElse("default");
    }

    /**
     * How long ago {@code peer}'s rate was last measured (by a transfer or a probe), or empty if
     * it never was and the default stands for it.
     */
    public Optional<Duration> rateAge(String peer) {
        Estimate e = estimates.get(peer);
        return e == null ? Optional.empty() : e.rateAge(nanoClock.getAsLong());
    }

    /** Every peer observed so far, with its estimate. */
    public Map<String, Link> links() {
        Map<String, Link> links = new HashMap<>();
        estimates.keySet().forEach(peer -> links.put(peer, link(peer)));
        return Map.copyOf(links);
    }

    private Estimate estimate(String peer) {
        return estimates.computeIfAbsent(peer, p -> new Estimate());
    }

    /** What is known of the link to one peer. */
    @ThreadSafe
    private static final class Estimate {
        /** Bounds the samples kept when rates keep falling within one window. */
        private static final int MAX_SAMPLES = 64;

        /**
         * The rate samples that can still be the window's maximum, oldest first: each is higher
         * than every later one, so the first one within the window is the maximum, and the last
         * is the latest sample.
         */
        @GuardedBy("this")
        private final ArrayDeque<RateSample> rates = new ArrayDeque<>();

        @GuardedBy("this")
        private double roundTrip = Double.NaN;

        @GuardedBy("this")
        private long roundTripAtNanos;

        synchronized void addRate(double rate, long now, long windowNanos) {
            while (!rates.isEmpty() && rates.peekLast().rate <= rate) {
                rates.pollLast();
            }
            rates.addLast(new RateSample(rate, now));
            if (rates.size() > MAX_SAMPLES) {
                rates.pollFirst();
            }
            dropExpired(now, windowNanos);
        }

        synchronized void set(double rate, double roundTripSeconds, long now) {
            rates.clear();
            rates.add(new RateSample(rate, now));
            roundTrip = roundTripSeconds;
            roundTripAtNanos = now;
        }

        synchronized void addRoundTrip(double seconds, long now) {
            roundTrip = Double.isNaN(roundTrip) ? seconds : roundTrip + ROUND_TRIP_WEIGHT * (seconds - roundTrip);
            roundTripAtNanos = now;
        }

        /** The highest rate within the window, the latest sample if every one is older, NaN if none. */
        synchronized double rate(long now, long windowNanos) {
            dropExpired(now, windowNanos);
            return rates.isEmpty() ? Double.NaN : rates.peekFirst().rate;
        }

        synchronized double roundTrip() {
            return roundTrip;
        }

        synchronized Optional<Duration> rateAge(long now) {
            return rates.isEmpty() ? Optional.empty() : Optional.of(Duration.ofNanos(Math.max(0, now - rates.peekLast().atNanos)));
        }

        synchronized Optional<Duration> roundTripAge(long now) {
            return Double.isNaN(roundTrip) ? Optional.empty() : Optional.of(Duration.ofNanos(Math.max(0, now - roundTripAtNanos)));
        }

        @GuardedBy("this")
        private void dropExpired(long now, long windowNanos) {
            while (rates.size() > 1 && now - rates.peekFirst().atNanos > windowNanos) {
                rates.pollFirst();
            }
        }
    }

    private record RateSample(double rate, long atNanos) {}
}
