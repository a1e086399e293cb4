package io.sr3.flink.restore;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.LinkShaper;
import io.sr3.flink.transport.LinkShaper.ShapedLink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The probe against shaped loopback: node 0 probes nodes 1-3, whose links towards it are shaped
 * to 20, 30 and 40 MB/s behind an inbound port of 60 MB/s that loses throughput beyond two
 * senders; links between the holders are 30 MB/s. Rates are low so that CPU does not blur them,
 * and medians of five samples keep a scheduling hiccup of the shared machine out of them.
 */
class NetworkProbeTest {

    private static final double MB = 1e6;
    private static final double[] TO_RECOVERING = {20 * MB, 30 * MB, 40 * MB};
    private static final double BETWEEN = 30 * MB;
    private static final double INBOUND = 60 * MB;
    private static final int THRESHOLD = 2;
    private static final Duration LATENCY = Duration.ofMillis(2);
    /** Generous: the shaper holds answers back in virtual time, the CPU adds its own share. */
    private static final double TOLERANCE = 0.35;

    @TempDir Path root;

    private TestingRing ring;

    @AfterEach
    void stop() {
        if (ring != null) {
            ring.close();
        }
    }

    /** Larger frames than {@link TestingRing#testConfig()}: probe blocks of 512 KiB time 20-50 MB/s links well. */
    private static NodeConfig config() {
        NodeConfig d = TestingRing.testConfig();
        return new NodeConfig(d.host(), List.of(0), List.of(), 2, "", 16, null, false, null,
                1024 * 1024, Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofSeconds(2), 256 * 1024);
    }

    @Test
    void measuresShapedLinksAndTheIncastThreshold() throws Exception {
        ring = TestingRing.start(4, config(), root);
        RingNode recovering = ring.node(0);
        List<Member> holders = List.of(ring.node(1).self(), ring.node(2).self(), ring.node(3).self());
        LinkShaper toRecovering = new LinkShaper(INBOUND, THRESHOLD, 2.0, new ShapedLink(BETWEEN, LATENCY));
        for (int i = 0; i < holders.size(); i++) {
            toRecovering.setLink(holders.get(i).address(), new ShapedLink(TO_RECOVERING[i], LATENCY));
        }
        recovering.shapeInboundLinks(toRecovering);
        for (int i = 1; i <= 3; i++) {
            ring.node(i).shapeInboundLinks(new LinkShaper(1e12, 4, 0, new ShapedLink(BETWEEN, LATENCY)));
        }

        long start = System.nanoTime();
        NetworkProbe.Measurement m = new NetworkProbe(recovering, new NetworkProbe.Settings(512 * 1024, 5, 8)).probe(holders);

        for (int i = 0; i < holders.size(); i++) {
            Link link = m.toThisNode().get(holders.get(i).id());
            assertThat(link.bytesPerSecond()).as("link from holder %d", i)
                    .isCloseTo(TO_RECOVERING[i], within(TOLERANCE * TO_RECOVERING[i]));
            assertThat(link.roundTrip()).isBetween(LATENCY, Duration.ofMillis(100));
        }
        assertThat(m.between()).hasSize(6);
        m.between().forEach((pair, link) -> assertThat(link.bytesPerSecond()).as(pair)
                .isCloseTo(BETWEEN, within(TOLERANCE * BETWEEN)));
        assertThat(m.aggregateBytesPerSecond()).hasSize(3);
        assertThat(m.inboundBytesPerSecond()).isCloseTo(INBOUND, within(TOLERANCE * INBOUND));
        assertThat(m.incastThreshold()).isEqualTo(THRESHOLD);
        assertThat(m.incastPenalty()).isPositive();
        assertThat(m.hopStartup()).isPositive();

        // Written into the view the planner reads, and the probe blocks are gone again.
        NetworkModel model = NetworkView.of(recovering).model();
        assertThat(model.toRecovering(holders.get(2).id()).bytesPerSecond())
                .isCloseTo(m.toThisNode().get(holders.get(2).id()).bytesPerSecond(), within(1.0));
        assertThat(model.incastThreshold()).isEqualTo(THRESHOLD);
        assertThat(model.between(holders.get(0).id(), holders.get(1).id()))
                .isEqualTo(m.between().get(holders.get(0).id() + "->" + holders.get(1).id()));
        for (int i = 1; i <= 3; i++) {
            assertThat(ring.node(i).store().keys("probe-")).isEmpty();
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
    }

    static Stream<Arguments> aggregates() {
        return Stream.of(
                // aggregates by senders (MB/s), inbound, threshold, penalty
                Arguments.of("one sender", List.of(50.0), 50.0, 1, 0.0),
                Arguments.of("no loss, noise within 10%", List.of(100.0, 98.0, 101.0, 95.0), 101.0, 4, 0.0),
                Arguments.of("links limit the first, loss beyond two", List.of(40.0, 60.0, 40.0), 60.0, 2, 0.5),
                Arguments.of("one stream at a time", List.of(160.0, 80.0, 160 / 3.0, 40.0), 160.0, 1, 1.0),
                Arguments.of("best in the middle", List.of(100.0, 200.0, 267.0, 200.0, 160.0, 133.0, 114.0, 100.0), 267.0, 3, 0.334),
                Arguments.of("a dip then recovery counts from the best", List.of(100.0, 70.0, 100.0, 100.0), 100.0, 4, 0.0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("aggregates")
    void fitsTheInboundModel(String name, List<Double> aggregates, double inbound, int threshold, double penalty) {
        NetworkProbe.Inbound fit = NetworkProbe.fitInbound(aggregates);
        assertThat(fit.bytesPerSecond()).isEqualTo(inbound);
        assertThat(fit.incastThreshold()).isEqualTo(threshold);
        assertThat(fit.incastPenalty()).isCloseTo(penalty, within(0.001));
    }
}
