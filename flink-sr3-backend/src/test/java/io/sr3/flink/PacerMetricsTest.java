package io.sr3.flink;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.pacing.PacerStatus;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The pacer's status, written to the ring as the JobManager's pacer does, read back by the operator gauges. */
class PacerMetricsTest {

    @TempDir Path root;

    private TestingRing ring;
    private final Map<String, Gauge<?>> gauges = new HashMap<>();

    @BeforeEach
    void start() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
        PacerMetrics.register(new Capturing("sr3", gauges), "job-1");
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    @Test
    void gaugesShowMinusOneUntilAPacerPublishes() {
        assertThat(gauges).containsKeys("sr3.pacing.boundMillis", "sr3.pacing.estimatedRecoveryMillis",
                "sr3.pacing.lastCheckpointAgeMillis", "sr3.pacing.triggers.ageBound",
                "sr3.pacing.triggers.cheapestMoment", "sr3.pacing.triggers.steadyInterval");
        assertThat(gauges.get("sr3.pacing.boundMillis").getValue()).isEqualTo(-1L);
    }

    @Test
    void gaugesShowThePublishedStatus() throws Exception {
        long lastCheckpoint = System.currentTimeMillis() - 5_000;
        PacerStatus status = new PacerStatus(7_500, 3_200, 5_000, lastCheckpoint, true, false, 42,
                Map.of(Reason.AGE_BOUND, 3L, Reason.CHEAPEST_MOMENT, 1L), Reason.AGE_BOUND, 100L << 20, -1,
                System.currentTimeMillis());
        RingNode jobManagerSide = ring.node(2);
        jobManagerSide.storage().writeAndWait(RingPacerStatusPublisher.key("job-1"), RingPacerStatusPublisher.encode(status), false);

        assertThat(gauges.get("sr3.pacing.boundMillis").getValue()).isEqualTo(7_500L);
        assertThat(gauges.get("sr3.pacing.estimatedRecoveryMillis").getValue()).isEqualTo(3_200L);
        assertThat((Long) gauges.get("sr3.pacing.lastCheckpointAgeMillis").getValue()).isBetween(5_000L, 60_000L);
        assertThat(gauges.get("sr3.pacing.boundReachable").getValue()).isEqualTo(1L);
        assertThat(gauges.get("sr3.pacing.triggers.ageBound").getValue()).isEqualTo(3L);
        assertThat(gauges.get("sr3.pacing.triggers.steadyInterval").getValue()).isEqualTo(0L);
        assertThat(gauges.get("sr3.pacing.decisions").getValue()).isEqualTo(42L);
    }

    /** Remembers every gauge under its dotted name. */
    private static final class Capturing extends UnregisteredMetricsGroup {
        private final String prefix;
        private final Map<String, Gauge<?>> gauges;

        Capturing(String prefix, Map<String, Gauge<?>> gauges) {
            this.prefix = prefix;
            this.gauges = gauges;
        }

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            gauges.put(prefix + "." + name, gauge);
            return gauge;
        }

        @Override
        public MetricGroup addGroup(String name) {
            return new Capturing(prefix + "." + name, gauges);
        }
    }
}
