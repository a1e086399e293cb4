package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.RelayRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The light periodic probe of {@code sr3.restore.probe-interval}: each run measures the link from
 * one peer to this node, the one whose rate was measured longest ago (never, first), and writes
 * it into the node's {@link NetworkView}. It places one probe block of at most {@link
 * #MAX_PROBE_BYTES} on the peer, times a few fetches of it and of a tiny block, streams it with
 * enough in flight to fill the link (two on a LAN, more over a distant link, at most {@code
 * sr3.restore.max-concurrent-fetches}), and deletes both: about ten probe blocks per run on a
 * LAN, a small share of what a {@link NetworkProbe} of every holder moves.
 *
 * <p>Once every live peer's link was measured, the run after the sweep measures this node's
 * inbound port instead (again whenever that measurement is older than every link's): up to
 * {@link #INBOUND_SENDERS} peers, fastest first, stream their probe blocks at once, 1, 2, ...
 * of them, with as many blocks in flight as a restore keeps ({@code
 * sr3.restore.max-concurrent-fetches}), twice each, and the better aggregates give the port's
 * capacity and incast loss ({@link NetworkProbe#fitInbound}): about 128 probe blocks with the
 * default 8 in flight,
 * what makes a tree or a line win where many senders overload the port. Links between peers are not probed: restores ask the
 * holders for those ({@code LINKS}).
 *
 * <p>Runs on the node's maintenance thread; a failed run is logged and counted, and the next run
 * tries the next peer.
 */
@NotThreadSafe
public final class LinkProbe implements Runnable {

    static final String TASK_NAME = "link-probe";
    /** Large enough to time a LAN link, small enough to cost little on every run. */
    static final int MAX_PROBE_BYTES = 1 << 20;
    private static final int TINY_BYTES = 64;
    private static final int SAMPLES = 3;
    private static final int IN_FLIGHT = 2;
    /** Senders streaming at once at most when the inbound port is measured. */
    static final int INBOUND_SENDERS = 4;

    private static final Logger LOG = LoggerFactory.getLogger(LinkProbe.class);

    private final RingNode node;
    private final int probeBytes;
    private final AtomicLong probes;
    private final AtomicLong failures;

    LinkProbe(RingNode node, AtomicLong probes, AtomicLong failures) {
        this.node = node;
        this.probeBytes = Math.min(MAX_PROBE_BYTES, node.config().blockSize());
        this.probes = probes;
        this.failures = failures;
    }

    /** Schedules the probe on {@code node} if its settings ask for one and it stores blocks. */
    static void scheduleOn(RingNode node) {
        Duration interval = node.config().restore().probeInterval();
        if (interval.isZero() || node.isClient()) {
            return;
        }
        AtomicLong probes = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        node.registerStat("linkProbes", probes::get);
        node.registerStat("linkProbeFailures", failures::get);
        node.scheduleMaintenance(TASK_NAME, () -> new LinkProbe(node, probes, failures), interval);
    }

    /**
     * Runs the probe until every live peer's link and this node's inbound port were measured once,
     * on the calling thread: what the periodic probe learns in {@code peers + 1} intervals, for a
     * node that must know its network now (a benchmark, an operator's tool).
     *
     * @return how many runs failed
     */
    public static int sweep(RingNode node) {
        AtomicLong probes = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        LinkProbe probe = new LinkProbe(node, probes, failures);
        for (int run = 0; run <= probe.livePeers().size(); run++) {
            probe.run();
        }
        return (int) failures.get();
    }

    @Override
    public void run() {
        Member peer = stalestPeer();
        if (peer == null) {
            return;
        }
        if (inboundDue()) {
            measureInbound();
            return;
        }
        LinkEstimator estimates = NetworkView.of(node).toThisNode();
        String before = estimates.source(peer.id());
        try {
            Link link = measure(peer);
            estimates.set(peer.id(), link);
            probes.incrementAndGet();
            LOG.info(String.format(Locale.ROOT, "[%s] link probe of %s: %.0f MB/s, round trip %.2f ms (was %s)",
                    node.self().id(), peer.id(), link.bytesPerSecond() / 1e6, link.roundTrip().toNanos() / 1e6, before));
        } catch (IOException | RuntimeException e) {
            failures.incrementAndGet();
            LOG.warn("[{}] link probe of {} failed ({}); its estimate stays ({})", node.self().id(), peer.id(),
                    e.getMessage(), before);
        }
    }

    /**
     * Whether this run measures the inbound port: every one of at least two live peers has a
     * measured link, and the port was never measured or longer ago than the stalest link.
     */
    boolean inboundDue() {
        NetworkView view = NetworkView.of(node);
        List<Member> peers = livePeers();
        if (peers.size() < 2 || peers.stream().anyMatch(p -> view.toThisNode().rateAge(p.id()).isEmpty())) {
            return false;
        }
        Duration stalestLink = peers.stream().map(p -> view.toThisNode().rateAge(p.id()).orElseThrow())
                .max(Comparator.naturalOrder()).orElseThrow();
        return view.inboundAge().map(age -> age.compareTo(stalestLink) > 0).orElse(true);
    }

    private void measureInbound() {
        NetworkView view = NetworkView.of(node);
        List<Member> senders = livePeers().stream()
                .sorted(Comparator.comparingDouble((Member m) -> -view.toThisNode().link(m.id()).bytesPerSecond())
                        .thenComparing(Member::id))
                .limit(INBOUND_SENDERS)
                .toList();
        String key = probeKey();
        byte[] big = NetworkProbe.randomBytes(probeBytes, System.nanoTime());
        RelayTimer timer = new RelayTimer(node, new NetworkProbe.Settings(probeBytes, 1, IN_FLIGHT));
        try {
            Map<String, RelayRequest> fetch = new LinkedHashMap<>();
            for (Member sender : senders) {
                timer.await(node.put(sender, key, big), "placing probe block " + key + " on " + sender.id());
                fetch.put(sender.id(), new RelayRequest(key, big.length, Crc32c.of(big), List.of(sender.id())));
            }
            List<String> ids = List.copyOf(fetch.keySet());
            List<Double> aggregates = new ArrayList<>();
            // As many blocks in flight as a restore keeps: fewer would measure the round trip of a distant port, not its rate.
            int window = node.config().restore().maxConcurrentFetches();
            for (int k = 1; k <= ids.size(); k++) {
                aggregates.add(timer.bestStreamRate(RelayTimer.lanes(ids.subList(0, k), Math.max(k, window)), fetch));
            }
            NetworkProbe.Inbound fit = NetworkProbe.fitInbound(aggregates);
            view.setInbound(fit.bytesPerSecond(), fit.incastThreshold(), fit.incastPenalty());
            probes.incrementAndGet();
            LOG.info(String.format(Locale.ROOT, "[%s] inbound probe over %d sender(s): %s MB/s with 1..%d at once -> "
                            + "inbound %.0f MB/s, incast threshold %d, penalty %.2f", node.self().id(), ids.size(),
                    aggregates.stream().map(a -> String.format(Locale.ROOT, "%.0f", a / 1e6)).toList(), ids.size(),
                    fit.bytesPerSecond() / 1e6, fit.incastThreshold(), fit.incastPenalty()));
        } catch (IOException | RuntimeException e) {
            failures.incrementAndGet();
            LOG.warn("[{}] inbound probe failed ({}); the inbound estimate stays", node.self().id(), e.getMessage());
        } finally {
            for (Member sender : senders) {
                timer.deleteQuietly(sender, key);
            }
        }
    }

    private List<Member> livePeers() {
        return node.membership().members().stream()
                .filter(m -> !m.sameNode(node.self()) && node.membership().isLive(m))
                .toList();
    }

    /** One key per probing node, on each peer: a probe cut short is overwritten and deleted by the next one. */
    private String probeKey() {
        return ("link-probe-from-" + node.self().id()).replace(':', '_');
    }

    /** The live storage peer whose link to this node was measured longest ago, never-measured ones first. */
    @Nullable
    Member stalestPeer() {
        LinkEstimator estimates = NetworkView.of(node).toThisNode();
        Comparator<Member> stalestFirst = Comparator
                .comparing((Member m) -> estimates.rateAge(m.id()).orElse(Duration.ofDays(365 * 100)))
                .reversed()
                .thenComparing(Member::id);
        return livePeers().stream().min(stalestFirst).orElse(null);
    }

    private Link measure(Member peer) throws IOException {
        String key = probeKey();
        byte[] big = NetworkProbe.randomBytes(probeBytes, System.nanoTime());
        byte[] tiny = NetworkProbe.randomBytes(TINY_BYTES, System.nanoTime() + 1);
        RelayTimer timer = new RelayTimer(node, new NetworkProbe.Settings(probeBytes, SAMPLES, IN_FLIGHT));
        try {
            timer.await(node.put(peer, key, big), "placing probe block " + key + " on " + peer.id());
            timer.await(node.put(peer, key + "-rtt", tiny), "placing probe block " + key + "-rtt on " + peer.id());
            RelayRequest bigFetch = new RelayRequest(key, big.length, Crc32c.of(big), List.of(peer.id()));
            RelayRequest tinyFetch = new RelayRequest(key + "-rtt", tiny.length, Crc32c.of(tiny), List.of(peer.id()));
            timer.timeOnce(tinyFetch); // opens the connection
            double roundTrip = timer.medianSeconds(tinyFetch);
            // Two blocks in flight fill a LAN link; a distant one needs more, or the stream times the round trip.
            int window = RelayTimer.window(timer.medianSeconds(bigFetch), roundTrip, node.config().restore().maxConcurrentFetches());
            double rate = timer.streamRate(RelayTimer.lanes(List.of(peer.id()), Math.max(IN_FLIGHT, window)),
                    Map.of(peer.id(), bigFetch));
            return new Link(rate, Duration.ofNanos((long) (roundTrip * 1e9)));
        } finally {
            timer.deleteQuietly(peer, key);
            timer.deleteQuietly(peer, key + "-rtt");
        }
    }
}
