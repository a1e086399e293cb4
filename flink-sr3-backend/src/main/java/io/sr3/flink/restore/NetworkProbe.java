package io.sr3.flink.restore;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.RelayRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32C;

/**
 * Measures, from one node, the network its restores will cross, and writes it into the node's
 * {@link NetworkView}, so that the planner plans from measurements instead of the LAN default.
 *
 * <p>Everything is timed over the ring's own {@code RELAY_BLOCK} path, with two probe blocks (one
 * of {@link Settings#probeBytes}, one tiny) that the probe writes into every holder first and
 * deletes at the end:
 *
 * <ul>
 *   <li>round trip to a holder: the median of tiny fetches;
 *   <li>a holder's link to this node: a stream of probe blocks from that holder alone, with enough
 *       in flight to cover its round trip; rate = bytes / (elapsed - round trip);
 *   <li>holder B's link to holder A: a relay along [A, B] is store-and-forward, so its median time
 *       minus the direct fetch from A is B's block crossing to A, and the same difference for the
 *       tiny block is the A-B round trip (forwarding cost included);
 *   <li>inbound and incast: streams from the k fastest holders at once, k = 1..n. The inbound rate
 *       is the best aggregate; the threshold is how far k goes from there within
 *       {@link #INCAST_TOLERANCE}; the penalty is fitted at the largest k, the case a star over
 *       every holder meets;
 *   <li>hop start-up: one block of the node's block size crossing a typical holder-holder hop,
 *       the pipeline fill that the planner's bottleneck terms leave out.
 * </ul>
 *
 * <p>A probe moves about {@code n^2} probe blocks for {@code n} holders: it is run on demand
 * (benchmarks, operators), not before every restore. It runs on the calling thread.
 */
@NotThreadSafe
public final class NetworkProbe {

    private static final Logger LOG = LoggerFactory.getLogger(NetworkProbe.class);

    /** Aggregates within this fraction of the best count as no incast loss. */
    static final double INCAST_TOLERANCE = 0.10;

    /** Below this a block says nothing about bandwidth (see {@link LinkEstimator}); the round-trip probe stays under it. */
    private static final int TINY_BYTES = 64;

    /** The most blocks kept in flight per holder, however long its round trip. */
    private static final int MAX_WINDOW = 16;

    /**
     * How much the probe moves.
     *
     * @param probeBytes size of the probe block; larger blocks time fast links more precisely
     * @param samples sequential fetches per median, and fetches per in-flight lane of a stream
     */
    public record Settings(int probeBytes, int samples) {
        public Settings {
            if (probeBytes <= TINY_BYTES) {
                throw new IllegalArgumentException("probeBytes must be > " + TINY_BYTES + ", was " + probeBytes);
            }
            if (samples < 1) {
                throw new IllegalArgumentException("samples must be >= 1, was " + samples);
            }
        }
    }

    /**
     * What one probe measured.
     *
     * @param toThisNode each holder's link to the probing node (stream rate, round trip)
     * @param between measured holder-to-holder links, keyed {@code "from->to"} like {@link NetworkModel#betweenHolders()}
     * @param aggregateBytesPerSecond what the probing node received from the k fastest holders at once, index k - 1
     * @param inboundBytesPerSecond the best aggregate
     * @param incastThreshold concurrent senders taken without loss
     * @param incastPenalty relative loss per sender beyond the threshold, fitted at the largest k
     * @param hopStartup the first block's store-and-forward on a typical holder hop
     * @param elapsed how long the probe took, placement and cleanup included
     */
    public record Measurement(
            Map<String, Link> toThisNode,
            Map<String, Link> between,
            List<Double> aggregateBytesPerSecond,
            double inboundBytesPerSecond,
            int incastThreshold,
            double incastPenalty,
            Duration hopStartup,
            Duration elapsed) {

        public Measurement {
            toThisNode = Map.copyOf(toThisNode);
            between = Map.copyOf(between);
            aggregateBytesPerSecond = List.copyOf(aggregateBytesPerSecond);
        }

        /**
         * Writes this measurement into {@code view}. On a view that has seen nothing it sets the
         * links exactly; otherwise each link is one more sample of its moving average.
         */
        public void applyTo(NetworkView view) {
            long sampleBytes = 1L << 30; // any size above LinkEstimator.MIN_SAMPLE_BYTES gives the same rate
            toThisNode.forEach((peer, link) -> {
                view.toThisNode().recordTransfer(peer, sampleBytes, Duration.ofNanos((long) (sampleBytes / link.bytesPerSecond() * 1e9)));
                view.toThisNode().recordRoundTrip(peer, link.roundTrip());
            });
            between.forEach((pair, link) -> {
                int arrow = pair.indexOf("->");
                view.setBetween(pair.substring(0, arrow), pair.substring(arrow + 2), link);
            });
            view.setInbound(inboundBytesPerSecond, incastThreshold, incastPenalty, hopStartup);
        }

        /** One line for logs. */
        public String summary() {
            return String.format(Locale.ROOT, "%d holder(s), links to this node %s MB/s, between holders median %.0f MB/s, "
                            + "aggregate by senders %s MB/s -> inbound %.0f MB/s, incast threshold %d, penalty %.2f, "
                            + "hop start-up %.2f ms; probed in %.1f s",
                    toThisNode.size(), megabytes(toThisNode.values().stream().map(Link::bytesPerSecond).sorted().toList()),
                    median(between.values().stream().mapToDouble(Link::bytesPerSecond).toArray()) / 1e6,
                    megabytes(aggregateBytesPerSecond), inboundBytesPerSecond / 1e6, incastThreshold, incastPenalty,
                    hopStartup.toNanos() / 1e6, elapsed.toMillis() / 1e3);
        }

        private static String megabytes(List<Double> rates) {
            return rates.stream().map(r -> String.format(Locale.ROOT, "%.0f", r / 1e6)).toList().toString();
        }
    }

    /** The inbound part of a measurement: a pure fit of the aggregates. */
    record Inbound(double bytesPerSecond, int incastThreshold, double incastPenalty) {}

    private final RingNode node;
    private final Settings settings;

    public NetworkProbe(RingNode node, Settings settings) {
        this.node = node;
        this.settings = settings;
        int frameRoom = node.config().maxFrameSize() - NodeConfig.BLOCK_FRAME_OVERHEAD;
        if (settings.probeBytes() > frameRoom) {
            throw new IllegalArgumentException("probeBytes " + settings.probeBytes() + " does not fit into a frame of "
                    + node.config().maxFrameSize() + " bytes");
        }
    }

    /**
     * Probes the network between this node and {@code holders}, writes it into this node's
     * {@link NetworkView} and returns it.
     *
     * @param holders the nodes restores fetch from; not this node
     * @throws IOException if a holder does not store or serve its probe block
     */
    public Measurement probe(List<Member> holders) throws IOException {
        if (holders.isEmpty() || holders.stream().anyMatch(h -> h.sameNode(node.self()))) {
            throw new IllegalArgumentException("Probe from " + node.self().id() + " needs peers other than itself, got " + holders);
        }
        long start = System.nanoTime();
        byte[] big = randomBytes(settings.probeBytes(), start);
        byte[] tiny = randomBytes(TINY_BYTES, start + 1);
        Map<String, RelayRequest> bigFetch = new LinkedHashMap<>();
        Map<String, RelayRequest> tinyFetch = new LinkedHashMap<>();
        try {
            for (Member holder : holders) {
                String key = probeKey(holder);
                await(node.put(holder, key, big), "placing probe block " + key + " on " + holder.id());
                await(node.put(holder, key + "-rtt", tiny), "placing probe block " + key + "-rtt on " + holder.id());
                bigFetch.put(holder.id(), new RelayRequest(key, big.length, crc(big), List.of(holder.id())));
                tinyFetch.put(holder.id(), new RelayRequest(key + "-rtt", tiny.length, crc(tiny), List.of(holder.id())));
            }
            Measurement measurement = measure(bigFetch, tinyFetch, start);
            measurement.applyTo(node.networkView());
            LOG.info("[{}] sr3 network probe: {}", node.self().id(), measurement.summary());
            return measurement;
        } finally {
            for (Member holder : holders) {
                deleteQuietly(holder, probeKey(holder));
                deleteQuietly(holder, probeKey(holder) + "-rtt");
            }
        }
    }

    private Measurement measure(Map<String, RelayRequest> bigFetch, Map<String, RelayRequest> tinyFetch, long start)
            throws IOException {
        Map<String, Double> roundTrip = new LinkedHashMap<>();
        Map<String, Double> single = new LinkedHashMap<>();
        Map<String, Integer> window = new LinkedHashMap<>();
        Map<String, Link> toThisNode = new LinkedHashMap<>();
        for (String holder : bigFetch.keySet()) {
            timeOnce(tinyFetch.get(holder)); // opens the connection
            roundTrip.put(holder, medianSeconds(tinyFetch.get(holder)));
            single.put(holder, medianSeconds(bigFetch.get(holder)));
            // Enough blocks in flight that one block's transmission times the window covers a whole fetch.
            double transmit = Math.max(single.get(holder) - roundTrip.get(holder), 1e-6);
            window.put(holder, (int) Math.min(MAX_WINDOW, Math.ceil(single.get(holder) / transmit) + 1));
            double rate = streamRate(List.of(holder), bigFetch, window, roundTrip);
            toThisNode.put(holder, new Link(rate, seconds(roundTrip.get(holder))));
        }

        double fastest = toThisNode.values().stream().mapToDouble(Link::bytesPerSecond).max().orElseThrow();
        double slowest = toThisNode.values().stream().mapToDouble(Link::bytesPerSecond).min().orElseThrow();
        Map<String, Link> between = new LinkedHashMap<>();
        List<Double> stageSeconds = new ArrayList<>();
        for (String a : bigFetch.keySet()) {
            for (String b : bigFetch.keySet()) {
                if (a.equals(b)) {
                    continue;
                }
                RelayRequest tinyVia = new RelayRequest(tinyFetch.get(b).key(), TINY_BYTES, tinyFetch.get(b).crc32c(), List.of(a, b));
                RelayRequest bigVia = new RelayRequest(bigFetch.get(b).key(), settings.probeBytes(), bigFetch.get(b).crc32c(), List.of(a, b));
                timeOnce(tinyVia); // opens the connection from a to b
                double hopRoundTrip = Math.max(0, medianSeconds(tinyVia) - roundTrip.get(a));
                double stage = medianSeconds(bigVia) - single.get(a) - hopRoundTrip;
                double rate = Math.min(10 * fastest, Math.max(slowest / 100, settings.probeBytes() / Math.max(stage, 1e-9)));
                between.put(b + "->" + a, new Link(rate, seconds(hopRoundTrip)));
                stageSeconds.add(settings.probeBytes() / rate);
            }
        }

        List<String> byRate = new ArrayList<>(bigFetch.keySet());
        byRate.sort(Comparator.comparingDouble((String h) -> -toThisNode.get(h).bytesPerSecond()).thenComparing(h -> h));
        List<Double> aggregates = new ArrayList<>();
        for (int k = 1; k <= byRate.size(); k++) {
            aggregates.add(streamRate(byRate.subList(0, k), bigFetch, window, roundTrip));
        }
        Inbound inbound = fitInbound(aggregates);
        // The first block of a forwarded stream crosses each hop before the pipeline flows.
        double typicalStage = stageSeconds.isEmpty() ? 0 : median(stageSeconds.stream().mapToDouble(d -> d).toArray());
        Duration hopStartup = seconds(typicalStage * node.config().blockSize() / settings.probeBytes());
        return new Measurement(toThisNode, between, aggregates, inbound.bytesPerSecond(), inbound.incastThreshold(),
                inbound.incastPenalty(), hopStartup, Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * Fits the inbound model of {@link NetworkModel} to aggregates measured with 1..n senders
     * (index k - 1): inbound = the best; threshold = from the best's k, as far as the aggregates
     * stay within {@link #INCAST_TOLERANCE} of it; penalty = what makes the model meet the
     * aggregate at the largest k, 0 when that is within the tolerance too.
     */
    static Inbound fitInbound(List<Double> aggregates) {
        if (aggregates.isEmpty()) {
            throw new IllegalArgumentException("No aggregate to fit");
        }
        int bestK = 1;
        for (int k = 2; k <= aggregates.size(); k++) {
            if (aggregates.get(k - 1) > aggregates.get(bestK - 1)) {
                bestK = k;
            }
        }
        double best = aggregates.get(bestK - 1);
        int threshold = bestK;
        while (threshold < aggregates.size() && aggregates.get(threshold) >= (1 - INCAST_TOLERANCE) * best) {
            threshold++;
        }
        int n = aggregates.size();
        double atLargest = aggregates.get(n - 1);
        double penalty = n > threshold ? Math.max(0, (best / atLargest - 1) / (n - threshold)) : 0;
        return new Inbound(best, threshold, penalty);
    }

    /**
     * Streams probe blocks from {@code holders} at once, each with its window in flight and
     * {@code samples} fetches per lane; returns bytes per second after the slowest round trip.
     */
    private double streamRate(List<String> holders, Map<String, RelayRequest> fetch, Map<String, Integer> window,
            Map<String, Double> roundTrip) throws IOException {
        List<CompletableFuture<Void>> lanes = new ArrayList<>();
        long bytes = 0;
        double slowestRoundTrip = 0;
        long begin = System.nanoTime();
        for (String holder : holders) {
            for (int lane = 0; lane < window.get(holder); lane++) {
                CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
                for (int i = 0; i < settings.samples(); i++) {
                    chain = chain.thenCompose(ignored -> node.relay(fetch.get(holder)).thenAccept(data -> {}));
                }
                lanes.add(chain);
                bytes += (long) settings.samples() * settings.probeBytes();
            }
            slowestRoundTrip = Math.max(slowestRoundTrip, roundTrip.get(holder));
        }
        await(CompletableFuture.allOf(lanes.toArray(new CompletableFuture<?>[0])), "streaming probe blocks from " + holders,
                settings.samples() * MAX_WINDOW * holders.size());
        double elapsed = (System.nanoTime() - begin) / 1e9;
        return bytes / Math.max(elapsed - slowestRoundTrip, elapsed / 10);
    }

    private double medianSeconds(RelayRequest request) throws IOException {
        double[] times = new double[settings.samples()];
        for (int i = 0; i < times.length; i++) {
            times[i] = timeOnce(request);
        }
        return median(times);
    }

    private double timeOnce(RelayRequest request) throws IOException {
        long begin = System.nanoTime();
        await(node.relay(request), "fetching probe block " + request.key() + " along " + request.route());
        return (System.nanoTime() - begin) / 1e9;
    }

    private <T> T await(CompletableFuture<T> future, String what) throws IOException {
        return await(future, what, 1);
    }

    /** Waits for {@code future}, allowing {@code requests} request deadlines of the longest route the probe uses. */
    private <T> T await(CompletableFuture<T> future, String what, int requests) throws IOException {
        Duration deadline = node.config().requestTimeout().multipliedBy(2L * Math.max(1, requests));
        try {
            return future.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw new IOException("sr3 network probe from " + node.self().id() + " failed " + what + ": " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IOException("sr3 network probe from " + node.self().id() + " got no answer " + what + " within "
                    + deadline + "; is the peer overloaded or gone?", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("Interrupted " + what);
        }
    }

    private void deleteQuietly(Member holder, String key) {
        try {
            await(node.delete(holder, key), "deleting probe block " + key + " on " + holder.id());
        } catch (IOException e) {
            LOG.warn("[{}] could not delete probe block {} on {}; the orphan sweep will: {}",
                    node.self().id(), key, holder.id(), e.getMessage());
        }
    }

    /** Unique per probing node and holder, and a valid block key ({@code host:port} has a colon). */
    private String probeKey(Member holder) {
        return ("probe-" + holder.id() + "-from-" + node.self().id()).replace(':', '_');
    }

    private static byte[] randomBytes(int length, long seed) {
        byte[] bytes = new byte[length];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) random.nextInt();
        }
        return bytes;
    }

    private static int crc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
    }

    private static Duration seconds(double seconds) {
        return Duration.ofNanos((long) (seconds * 1e9));
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
