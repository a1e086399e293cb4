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
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The light periodic probe of {@code sr3.restore.probe-interval}: each run measures the link from
 * one peer to this node, the one whose rate was measured longest ago (never, first), and writes
 * it into the node's {@link NetworkView}. It places one probe block of at most {@link
 * #MAX_PROBE_BYTES} on the peer, times a few fetches of it and one of a tiny block, streams it
 * with a few in flight, and deletes both: about eight probe blocks' worth of traffic per run, a
 * small share of what a {@link NetworkProbe} of every holder moves, and it measures no
 * holder-to-holder links or incast (restores learn those, or the full probe).
 *
 * <p>Runs on the node's maintenance thread; a failed run is logged and counted, and the next run
 * tries the next peer.
 */
@NotThreadSafe
final class LinkProbe implements Runnable {

    static final String TASK_NAME = "link-probe";
    /** Large enough to time a LAN link, small enough to cost little on every run. */
    static final int MAX_PROBE_BYTES = 1 << 20;
    private static final int TINY_BYTES = 64;
    private static final int SAMPLES = 3;
    private static final int IN_FLIGHT = 2;

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

    @Override
    public void run() {
        Member peer = stalestPeer();
        if (peer == null) {
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

    /** The live storage peer whose link to this node was measured longest ago, never-measured ones first. */
    @Nullable
    Member stalestPeer() {
        LinkEstimator estimates = NetworkView.of(node).toThisNode();
        Comparator<Member> stalestFirst = Comparator
                .comparing((Member m) -> estimates.rateAge(m.id()).orElse(Duration.ofDays(365 * 100)))
                .reversed()
                .thenComparing(Member::id);
        return node.membership().members().stream()
                .filter(m -> !m.sameNode(node.self()) && node.membership().isLive(m))
                .min(stalestFirst)
                .orElse(null);
    }

    private Link measure(Member peer) throws IOException {
        // One key per probing node, on the peer: a probe cut short is overwritten and deleted by the next one.
        String key = ("link-probe-from-" + node.self().id()).replace(':', '_');
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
            double rate = timer.streamRate(RelayTimer.lanes(List.of(peer.id()), IN_FLIGHT), Map.of(peer.id(), bigFetch));
            return new Link(rate, Duration.ofNanos((long) (roundTrip * 1e9)));
        } finally {
            timer.deleteQuietly(peer, key);
            timer.deleteQuietly(peer, key + "-rtt");
        }
    }
}
