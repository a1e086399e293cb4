package io.sr3.flink.restore;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.transport.LinkShaper.ShapedLink;
import io.sr3.flink.transport.LinkShaper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The periodic link probe ({@code sr3.restore.probe-interval}) measures the links from a node's
 * peers without any read or restore, the stalest first; on real sockets in one JVM, with node 0's
 * inbound links shaped.
 */
class LinkProbeTest {

    private static final double SHAPED = 20e6;
    private static final double FAST = 1e12;
    private static final Duration LATENCY = Duration.ofMillis(1);

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @Test
    void eachRunMeasuresTheStalestPeerFromItsOwnTransfersAndCleansUp() throws Exception {
        TestingRing ring = rings.start(3, config(Duration.ZERO));
        RingNode node = ring.node(0);
        String slow = ring.node(1).self().id();
        String fast = ring.node(2).self().id();
        node.shapeInboundLinks(new LinkShaper(FAST, 8, 0, new ShapedLink(FAST, LATENCY))
                .setLink(ring.node(1).self().address(), new ShapedLink(SHAPED, LATENCY)));
        LinkEstimator estimates = NetworkView.of(node).toThisNode();
        AtomicLong probes = new AtomicLong();
        AtomicLong failures = new AtomicLong();

        new LinkProbe(node, probes, failures).run();

        assertThat(List.of(estimates.source(slow), estimates.source(fast))).as("one peer measured per run")
                .filteredOn(source -> source.startsWith("rate measured")).hasSize(1);
        String first = estimates.rateAge(slow).isPresent() ? slow : fast;
        String second = first.equals(slow) ? fast : slow;
        new LinkProbe(node, probes, failures).run();

        assertThat(estimates.source(slow)).startsWith("rate measured");
        assertThat(estimates.source(fast)).startsWith("rate measured");
        assertThat(estimates.link(slow).bytesPerSecond()).as("the shaped link").isCloseTo(SHAPED, within(0.4 * SHAPED));
        assertThat(estimates.link(fast).bytesPerSecond()).as("the unshaped link").isGreaterThan(2 * SHAPED);
        assertThat(estimates.link(slow).roundTrip()).isBetween(LATENCY, Duration.ofMillis(200));
        assertThat(probes.get()).isEqualTo(2);
        assertThat(failures.get()).isZero();
        for (int i = 1; i <= 2; i++) {
            assertThat(ring.node(i).store().keys("link-probe")).as("probe blocks left on node %d", i).isEmpty();
        }
        // Every link measured: the third run measures the inbound port, the fourth the stalest link again.
        new LinkProbe(node, probes, failures).run();
        assertThat(NetworkView.of(node).inboundAge()).isPresent();
        assertThat(new LinkProbe(node, probes, failures).stalestPeer().id()).isIn(first, second);
    }

    @Test
    void aPeerTooSlowToAnswerFailsTheProbeWhichIsCountedAndLeavesTheEstimate() throws Exception {
        TestingRing ring = rings.start(2, config(Duration.ZERO));
        RingNode node = ring.node(0);
        String peer = ring.node(1).self().id();
        // 1 kB/s: a probe block cannot arrive within the request deadline; pings (tiny) still do.
        node.shapeInboundLinks(new LinkShaper(FAST, 8, 0, new ShapedLink(FAST, LATENCY))
                .setLink(ring.node(1).self().address(), new ShapedLink(1e3, LATENCY)));
        AtomicLong probes = new AtomicLong();
        AtomicLong failures = new AtomicLong();

        new LinkProbe(node, probes, failures).run();

        assertThat(failures.get()).isEqualTo(1);
        assertThat(probes.get()).isZero();
        assertThat(NetworkView.of(node).toThisNode().source(peer)).startsWith("rate default");
    }

    /**
     * Node 0's port takes 20 MB/s from one sender and loses half of it with each more (threshold
     * 1, penalty 1): once every peer's link was measured, the next run measures the port, and
     * after that the links again, the stalest first.
     */
    @Test
    void afterEveryLinkTheProbeMeasuresTheInboundPortAndItsIncastLoss() throws Exception {
        TestingRing ring = rings.start(4, config(Duration.ZERO));
        RingNode node = ring.node(0);
        LinkShaper incast = new LinkShaper(SHAPED, 1, 1.0, new ShapedLink(FAST, LATENCY));
        node.shapeInboundLinks(incast);
        NetworkView view = NetworkView.of(node);
        AtomicLong probes = new AtomicLong();
        AtomicLong failures = new AtomicLong();

        for (int run = 1; run <= 3; run++) {
            assertThat(new LinkProbe(node, probes, failures).inboundDue()).as("before run %d", run).isFalse();
            new LinkProbe(node, probes, failures).run();
        }
        assertThat(view.inboundAge()).isEmpty();
        assertThat(new LinkProbe(node, probes, failures).inboundDue()).as("every link measured").isTrue();

        new LinkProbe(node, probes, failures).run();

        assertThat(view.inboundAge()).isPresent();
        assertThat(view.sources(List.of())).containsEntry("inbound port", "probed 0 s ago");
        NetworkModel model = view.model();
        assertThat(model.inbound(1)).as("one sender").isCloseTo(SHAPED, within(0.4 * SHAPED));
        assertThat(model.inbound(3)).as("three senders share a port that loses half per extra sender")
                .isLessThan(0.6 * model.inbound(1));
        assertThat(probes.get()).isEqualTo(4);
        assertThat(failures.get()).isZero();
        for (int i = 1; i <= 3; i++) {
            assertThat(ring.node(i).store().keys("link-probe")).as("probe blocks left on node %d", i).isEmpty();
        }
        assertThat(new LinkProbe(node, probes, failures).inboundDue()).as("the port is now fresher than every link").isFalse();
    }

    @Test
    void aNodeWithAProbeIntervalLearnsItsPeersLinksWithoutAnyReadOrRestore() throws Exception {
        TestingRing ring = rings.start(3, config(Duration.ofMillis(100)));
        RingNode node = ring.node(0);
        LinkEstimator estimates = NetworkView.of(node).toThisNode();

        // A probe's own relays are passive samples too: a link has a rate before its probe run has ended and counted.
        Deadline.poll("node 0 to finish probing both peers and its port", TestingRing.AWAIT_TIMEOUT,
                () -> node.stats().get("linkProbes") >= 3, () -> node.stats().toString());

        assertThat(estimates.rateAge(ring.node(1).self().id())).isPresent();
        assertThat(estimates.rateAge(ring.node(2).self().id())).isPresent();
        assertThat(NetworkView.of(node).inboundAge()).isPresent();
        assertThat(node.stats().get("linkProbeFailures")).isZero();
    }

    @Test
    void withoutAProbeIntervalNothingIsProbed() throws Exception {
        TestingRing ring = rings.start(2, config(Duration.ZERO));
        assertThat(ring.node(0).stats()).doesNotContainKey("linkProbes");
        assertThat(NetworkView.of(ring.node(0)).toThisNode().source(ring.node(1).self().id())).startsWith("rate default");
    }

    /** The test ring's settings with 256 KiB blocks (the probe's block) and the given probe interval. */
    private static NodeConfig config(Duration probeInterval) {
        NodeConfig d = NodeConfig.defaults();
        NodeConfig config = new NodeConfig(d.host(), List.of(0), List.of(), 2, "", 16, null, false, null,
                1024 * 1024, Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ofSeconds(2), 256 * 1024);
        return config.withRestore(config.restore().withProbeInterval(probeInterval));
    }
}
