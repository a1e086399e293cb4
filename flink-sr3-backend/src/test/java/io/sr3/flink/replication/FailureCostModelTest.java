package io.sr3.flink.replication;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

/**
 * The failure-cost model, one row per situation. Every row: restore at 100 MB/s, failure
 * detection 5 s, checkpoint age 10 s.
 */
class FailureCostModelTest {

    private static final double INF = Double.POSITIVE_INFINITY;
    private static final RecoveryFacts FACTS = new RecoveryFacts(100_000_000, Duration.ofSeconds(5),
            Duration.ofSeconds(10));

    /** Rates are totals over the vertex's subtasks; expected values in seconds. */
    record Row(String situation, int parallelism, long stateBytes, double input, double capacity, int region,
            double restore, double replay, double stalled) {

        @Override
        public String toString() {
            return situation;
        }
    }

    static Stream<Row> rows() {
        return Stream.of(
                // R = 400 MB / 4 / 100 MB/s = 1 s; per subtask lambda 1000, mu 2000: replay 1000 * (10+5+1) / 1000.
                new Row("half busy: replay as long as the time behind", 4, 400_000_000, 4000, 8000, 4, 1, 16, 88),
                new Row("the region multiplies the stall", 4, 400_000_000, 4000, 8000, 10, 1, 16, 220),
                // lambda 3000 of mu 4000 per subtask: replay 3000 * 16 / 1000 = 48.
                new Row("near capacity: replay three times the time behind", 2, 200_000_000, 6000, 8000, 2, 1, 48, 108),
                new Row("no input: detection and restore only", 2, 100_000_000, 0, 8000, 3, 0.5, 0, 16.5),
                new Row("no state: detection times the region", 2, 0, 0, 1000, 6, 0, 0, 30),
                new Row("unknown capacity counts as unlimited: no replay", 1, 50_000_000, 500, INF, 1, 0.5, 0, 5.5),
                new Row("input equal to capacity never catches up", 2, 100_000_000, 1000, 1000, 2, 0.5, INF, INF),
                new Row("input over capacity never catches up", 2, 100_000_000, 2000, 1000, 2, 0.5, INF, INF),
                new Row("input against zero capacity never catches up", 1, 1, 1, 0, 1, 1e-8, INF, INF));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void costOfLosingOneSubtasksCopies(Row row) {
        OperatorProfile op = new OperatorProfile("v", "op", row.parallelism(), row.stateBytes(), row.input(),
                row.capacity(), row.region());

        OperatorCost cost = FailureCostModel.cost(op, FACTS);

        assertThat(cost.operator()).isEqualTo(op);
        assertThat(cost.restoreSeconds()).isCloseTo(row.restore(), offset(1e-9));
        assertSeconds(cost.replaySeconds(), row.replay());
        assertSeconds(cost.stalledSubtaskSeconds(), row.stalled());
        assertThat(cost.isUnbounded()).isEqualTo(Double.isInfinite(row.stalled()));
    }

    @Test
    void olderCheckpointsAndSlowerDetectionCostMore() {
        OperatorProfile op = new OperatorProfile("v", "op", 4, 400_000_000, 4000, 8000, 4);
        OperatorCost base = FailureCostModel.cost(op, FACTS);
        OperatorCost older = FailureCostModel.cost(op, new RecoveryFacts(100_000_000, Duration.ofSeconds(5),
                Duration.ofSeconds(30)));
        OperatorCost slowerRestore = FailureCostModel.cost(op, new RecoveryFacts(10_000_000, Duration.ofSeconds(5),
                Duration.ofSeconds(10)));
        assertThat(older.replaySeconds()).isCloseTo(36, offset(1e-9)); // 1000 * (30+5+1) / 1000
        assertThat(slowerRestore.restoreSeconds()).isCloseTo(10, offset(1e-9));
        assertThat(older.stalledSubtaskSeconds()).isGreaterThan(base.stalledSubtaskSeconds());
        assertThat(slowerRestore.stalledSubtaskSeconds()).isGreaterThan(base.stalledSubtaskSeconds());
    }

    @Test
    void badProfilesNameTheOperatorAndTheField() {
        assertRejected(() -> new OperatorProfile("v1", "map", 0, 1, 1, 1, 1), "parallelism", "0");
        assertRejected(() -> new OperatorProfile("v1", "map", 1, -1, 1, 1, 1), "stateBytes", "-1");
        assertRejected(() -> new OperatorProfile("v1", "map", 1, 1, Double.NaN, 1, 1), "inputRecordsPerSecond", "NaN");
        assertRejected(() -> new OperatorProfile("v1", "map", 1, 1, INF, 1, 1), "inputRecordsPerSecond", "Infinity");
        assertRejected(() -> new OperatorProfile("v1", "map", 1, 1, -2, 1, 1), "inputRecordsPerSecond", "-2");
        assertRejected(() -> new OperatorProfile("v1", "map", 1, 1, 1, Double.NaN, 1), "capacityRecordsPerSecond", "NaN");
        assertRejected(() -> new OperatorProfile("v1", "map", 1, 1, 1, -1, 1), "capacityRecordsPerSecond", "-1");
        assertRejected(() -> new OperatorProfile("v1", "map", 1, 1, 1, 1, 0), "failoverRegionSubtasks", "0");
        assertThatThrownBy(() -> new OperatorProfile(" ", "map", 1, 1, 1, 1, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("vertexId");
    }

    @Test
    void badFactsAreRejected() {
        assertThatThrownBy(() -> new RecoveryFacts(0, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("restoreBytesPerSecond");
        assertThatThrownBy(() -> new RecoveryFacts(1, Duration.ofSeconds(-1), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("detection");
        assertThatThrownBy(() -> new RecoveryFacts(1, Duration.ZERO, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("checkpointAge");
    }

    private static void assertRejected(Runnable construction, String field, String value) {
        assertThatThrownBy(construction::run).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("v1").hasMessageContaining("map").hasMessageContaining(field)
                .hasMessageContaining(value);
    }

    private static void assertSeconds(double actual, double expected) {
        if (Double.isInfinite(expected)) {
            assertThat(actual).isEqualTo(expected);
        } else {
            assertThat(actual).isCloseTo(expected, offset(1e-9));
        }
    }
}
