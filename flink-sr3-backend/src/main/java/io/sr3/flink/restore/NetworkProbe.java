package io.sr3.flink.restore;

import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.RelayRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
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
 *       in flight to cover its round trip; its steady rate, after the first wave;
 *   <li>holder B's link to holder A: a relay along [A, B] is store-and-forward, so its median time
 *       minus the direct fetch from A is B's block crossing to A, and the same difference for the
 *       tiny block is the A-B round trip (forwarding cost included);
 *   <li>inbound and incast: steady streams from the k fastest holders at once, k = 1..n, with as
 *       many blocks in flight in total as a restore keeps (at least one per holder), the better of
 *       two such streams for each k. Inbound is the
 *       best aggregate, the threshold the largest k within {@link #INCAST_TOLERANCE} of it, the
 *       penalty fitted at the largest k (what a star over every holder meets);
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
     * @param samples sequential fetches per median; a stream fetches twice as many per block in flight
     * @param concurrentFetches blocks in flight when several holders send at once: the restores'
     *     {@link RestoreSettings#maxConcurrentFetches()}, so that the inbound port is loaded the
     *     way a star restore loads it (incast depends on how much each sender has in flight)
     */
    public record Settings(int probeBytes, int samples, int concurrentFetches) {
        public Settings {
            if (probeBytes <= TINY_BYTES) {
                throw new IllegalArgumentException("probeBytes must be > " + TINY_BYTES + ", was " + probeBytes);
            }
            if (samples < 1) {
                throw new IllegalArgumentException("samples must be >= 1, was " + samples);
            }
            if (concurrentFetches < 1) {
                throw new IllegalArgumentException("concurrentFetches must be >= 1, was " + concurrentFetches);
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
     * @param elapsed how long the probe took, placing the probe blocks included
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
         * Writes this measurement into {@code view}: its links replace what passive samples
         * estimated so far (later transfers refine them again).
         */
        public void applyTo(NetworkView view) {
            toThisNode.forEach((peer, link) -> view.toThisNode().set(peer, link));
            between.forEach((pair, link) -> {
                int arrow = pair.indexOf("->");
                view.setBetween(pair.substring(0, arrow), pair.substring(arrow + 2), link);
            });
            view.setInbound(inboundBytesPerSecond, incastThreshold, incastPenalty, hopStartup);
        }

        /** One line for logs. */
        public String summary() {
            return String.format(Locale.ROOT, "%d holder(s), links to this node %s MB/s, between holders median %s MB/s, "
                            + "aggregate by senders %s MB/s -> inbound %.0f MB/s, incast threshold %d, penalty %.2f, "
                            + "hop start-up %.2f ms; probed in %.1f s",
                    toThisNode.size(), megabytes(toThisNode.values().stream().map(Link::bytesPerSecond).sorted().toList()),
                    between.isEmpty() ? "-" : String.format(Locale.ROOT, "%.0f",
                            RelayTimer.median(between.values().stream().mapToDouble(Link::bytesPerSecond).toArray()) / 1e6),
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
    private final RelayTimer timer;

    public NetworkProbe(RingNode node, Settings settings) {
        this.node = node;
        this.settings = settings;
        this.timer = new RelayTimer(node, settings);
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
                timer.await(node.put(holder, key, big), "placing probe block " + key + " on " + holder.id());
                timer.await(node.put(holder, key + "-rtt", tiny), "placing probe block " + key + "-rtt on " + holder.id());
                bigFetch.put(holder.id(), new RelayRequest(key, big.length, crc(big), List.of(holder.id())));
                tinyFetch.put(holder.id(), new RelayRequest(key + "-rtt", tiny.length, crc(tiny), List.of(holder.id())));
            }
            Measurement measurement = measure(bigFetch, tinyFetch, start);
            measurement.applyTo(NetworkView.of(node));
            LOG.info("[{}] sr3 network probe: {}", node.self().id(), measurement.summary());
            return measurement;
        } finally {
            for (Member holder : holders) {
                timer.deleteQuietly(holder, probeKey(holder));
                timer.deleteQuietly(holder, probeKey(holder) + "-rtt");
            }
        }
    }

    private Measurement measure(Map<String, RelayRequest> bigFetch, Map<String, RelayRequest> tinyFetch, long start)
            throws IOException {
        Map<String, Link> toThisNode = linksToThisNode(bigFetch, tinyFetch);
        Map<String, Link> between = linksBetween(bigFetch, tinyFetch, toThisNode);
        List<String> fastestFirst = new ArrayList<>(bigFetch.keySet());
        fastestFirst.sort(Comparator.comparingDouble((String h) -> -toThisNode.get(h).bytesPerSecond()).thenComparing(h -> h));
        List<Double> aggregates = new ArrayList<>();
        for (int k = 1; k <= fastestFirst.size(); k++) {
            aggregates.add(timer.bestStreamRate(RelayTimer.lanes(fastestFirst.subList(0, k), Math.max(k, settings.concurrentFetches())), bigFetch));
        }
        Inbound inbound = fitInbound(aggregates);
        // The first block of a forwarded stream crosses each hop before the pipeline flows.
        double blockSeconds = RelayTimer.median(between.values().stream().mapToDouble(l -> node.config().blockSize() / l.bytesPerSecond()).toArray());
        Duration hopStartup = between.isEmpty() ? Duration.ZERO : seconds(blockSeconds);
        return new Measurement(toThisNode, between, aggregates, inbound.bytesPerSecond(), inbound.incastThreshold(),
                inbound.incastPenalty(), hopStartup, Duration.ofNanos(System.nanoTime() - start));
    }

    /** Round trip (median of tiny fetches) and steady stream rate of every holder alone. */
    private Map<String, Link> linksToThisNode(Map<String, RelayRequest> bigFetch, Map<String, RelayRequest> tinyFetch)
            throws IOException {
        Map<String, Link> links = new LinkedHashMap<>();
        for (String holder : bigFetch.keySet()) {
            timer.timeOnce(tinyFetch.get(holder)); // opens the connection
            double roundTrip = timer.medianSeconds(tinyFetch.get(holder));
            double single = timer.medianSeconds(bigFetch.get(holder));
            int window = RelayTimer.window(single, roundTrip, MAX_WINDOW);
            links.put(holder, new Link(timer.streamRate(RelayTimer.lanes(List.of(holder), window), bigFetch), seconds(roundTrip)));
        }
        return links;
    }

    /** Every holder's link to every other, from 2-hop relays paired with direct fetches from the first hop. */
    private Map<String, Link> linksBetween(Map<String, RelayRequest> bigFetch, Map<String, RelayRequest> tinyFetch,
            Map<String, Link> toThisNode) throws IOException {
        double fastest = toThisNode.values().stream().mapToDouble(Link::bytesPerSecond).max().orElseThrow();
        double slowest = toThisNode.values().stream().mapToDouble(Link::bytesPerSecond).min().orElseThrow();
        Map<String, Link> between = new LinkedHashMap<>();
        for (String a : bigFetch.keySet()) {
            for (String b : bigFetch.keySet()) {
                if (a.equals(b)) {
                    continue;
                }
                RelayRequest tinyVia = new RelayRequest(tinyFetch.get(b).key(), TINY_BYTES, tinyFetch.get(b).crc32c(), List.of(a, b));
                RelayRequest bigVia = new RelayRequest(bigFetch.get(b).key(), settings.probeBytes(), bigFetch.get(b).crc32c(), List.of(a, b));
                timer.timeOnce(tinyVia); // opens the connection from a to b
                timer.timeOnce(bigVia);
                // Each 2-hop fetch is paired with a direct one just before it, so that drift cancels out.
                double[] tinyExtra = new double[settings.samples()];
                double[] bigExtra = new double[settings.samples()];
                for (int i = 0; i < settings.samples(); i++) {
                    double direct = timer.timeOnce(tinyFetch.get(a));
                    tinyExtra[i] = timer.timeOnce(tinyVia) - direct;
                    direct = timer.timeOnce(bigFetch.get(a));
                    bigExtra[i] = timer.timeOnce(bigVia) - direct;
                }
                double hopRoundTrip = Math.max(0, RelayTimer.median(tinyExtra));
                double stage = RelayTimer.median(bigExtra) - hopRoundTrip;
                // A stage lost in the noise is a link too fast to time; one that seems endless is noise too.
                double rate = Math.min(10 * fastest, Math.max(slowest / 100, settings.probeBytes() / Math.max(stage, 1e-9)));
                between.put(b + "->" + a, new Link(rate, seconds(hopRoundTrip)));
            }
        }
        return between;
    }

    /**
     * Fits the inbound model of {@link NetworkModel} to aggregates measured with 1..n senders
     * (index k - 1): inbound = the best; threshold = the largest k whose aggregate is within
     * {@link #INCAST_TOLERANCE} of it; penalty = what makes the model meet the aggregate at the
     * largest k (what a star over every holder meets), 0 when that is within the tolerance too.
     */
    static Inbound fitInbound(List<Double> aggregates) {
        if (aggregates.isEmpty()) {
            throw new IllegalArgumentException("No aggregate to fit");
        }
        double best = aggregates.stream().mapToDouble(d -> d).max().orElseThrow();
        int threshold = 1;
        for (int k = 1; k <= aggregates.size(); k++) {
            if (aggregates.get(k - 1) >= (1 - INCAST_TOLERANCE) * best) {
                threshold = k;
            }
        }
        int n = aggregates.size();
        double penalty = n > threshold ? Math.max(0, (best / aggregates.get(n - 1) - 1) / (n - threshold)) : 0;
        return new Inbound(best, threshold, penalty);
    }

    /** Unique per probing node and holder, and a valid block key ({@code host:port} has a colon). */
    private String probeKey(Member holder) {
        return ("probe-" + holder.id() + "-from-" + node.self().id()).replace(':', '_');
    }

    static byte[] randomBytes(int length, long seed) {
        byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
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
}
