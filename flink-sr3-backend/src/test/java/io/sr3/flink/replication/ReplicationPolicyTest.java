package io.sr3.flink.replication;

import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

/**
 * The replication policy on tables of operators. Facts everywhere: restore at 100 MB/s, failure
 * detection 10 s, checkpoint age 15 s.
 */
class ReplicationPolicyTest {

    private static final long MIB = 1024 * 1024;
    private static final RecoveryFacts FACTS = new RecoveryFacts(100_000_000, Duration.ofSeconds(10),
            Duration.ofSeconds(15));

    /**
     * The multi-process test's job: a small expensive operator (its region holds all 8 subtasks of
     * the job, input at 80% of capacity) and a larger cheap one (region 1, 10% busy). At budget 2.3
     * the expensive one's extra copy fits (mean 2 + 10/50 = 2.2), the cheap one's does not (3.0).
     */
    @Test
    void atBudget23TheExpensiveOperatorGetsThreeCopiesAndTheCheapOneTwo() {
        OperatorCost expensive = cost("expensive", 4, 10 * MIB, 8000, 10_000, 8);
        OperatorCost cheap = cost("cheap", 4, 40 * MIB, 1000, 10_000, 1);

        ReplicationPlan plan = costAware(2.3, 2, 3, 2).plan(List.of(cheap, expensive), 4, 2);

        assertThat(plan.copiesFor("expensive")).hasValue(3);
        assertThat(plan.copiesFor("cheap")).hasValue(2);
        assertThat(plan.meanCopies()).isCloseTo(2.2, offset(1e-12));
        ReplicaChoice e = choice(plan, "expensive");
        assertThat(e.zones()).isEqualTo(2);
        assertThat(e.reason()).isEqualTo("highest failure cost per byte; at max-copies");
        assertThat(choice(plan, "cheap").reason()).isEqualTo("failure cost per byte ranked 2 of 2; budget exhausted");
        assertThat(plan.defaultCopies()).isEqualTo(2);
    }

    @Test
    void atTheStorageOfUniformReplicationNothingRisesAboveTheMinimum() {
        OperatorCost expensive = cost("expensive", 4, 10 * MIB, 8000, 10_000, 8);
        OperatorCost cheap = cost("cheap", 4, 40 * MIB, 1000, 10_000, 1);

        ReplicationPlan plan = costAware(2.0, 2, 3, 2).plan(List.of(cheap, expensive), 4, 2);

        assertThat(plan.choices()).extracting(ReplicaChoice::copies).containsExactly(2, 2);
        assertThat(plan.meanCopies()).isEqualTo(2.0);
    }

    @Test
    void aLargeStateOperatorWithABigRegionGetsMoreCopiesThanASmallCheapOne() {
        OperatorCost large = cost("large", 4, 40 * MIB, 8000, 10_000, 8);
        OperatorCost small = cost("small", 4, 8 * MIB, 1000, 10_000, 1);

        ReplicationPlan plan = costAware(2.9, 2, 3, 2).plan(List.of(small, large), 5, 3);

        assertThat(plan.copiesFor("large")).hasValue(3);
        assertThat(plan.copiesFor("small")).hasValue(2);
        assertThat(choice(plan, "large").zones()).isEqualTo(3);
        assertThat(choice(plan, "small").zones()).isEqualTo(2);
    }

    @Test
    void unboundedCostsRankFirstFewestCopiesThenSmallestStateFirst() {
        OperatorCost finite = cost("finite", 1, MIB, 900, 1000, 64); // high but finite cost per byte
        OperatorCost overloadedBig = cost("over-big", 1, 4 * MIB, 2000, 1000, 1);
        OperatorCost overloadedSmall = cost("over-small", 1, 2 * MIB, 2000, 1000, 1);
        // 7 MiB at 2 copies; a budget of 3 leaves 7 MiB of extra copies: 2 for the small, 4 for the big one.
        ReplicationPlan plan = costAware(3.0, 2, 4, 2).plan(List.of(finite, overloadedBig, overloadedSmall), 8, 2);

        assertThat(plan.copiesFor("over-small")).hasValue(3);
        assertThat(plan.copiesFor("over-big")).hasValue(3);
        assertThat(plan.copiesFor("finite")).hasValue(3);
        assertThat(choice(plan, "over-big").reason()).startsWith("unbounded failure cost");
        // One step less budget: the finite operator's copy is the one that no longer fits.
        ReplicationPlan tighter = costAware(2.99, 2, 4, 2).plan(List.of(finite, overloadedBig, overloadedSmall), 8, 2);
        assertThat(tighter.copiesFor("finite")).hasValue(2);
        assertThat(tighter.copiesFor("over-big")).hasValue(3);
    }

    @Test
    void tiesGoToTheLowerVertexIdWhateverTheInputOrder() {
        OperatorCost b = cost("b", 2, 10 * MIB, 100, 1000, 2);
        OperatorCost a = cost("a", 2, 10 * MIB, 100, 1000, 2);
        ReplicationPolicy policy = costAware(2.5, 2, 3, 2);

        ReplicationPlan plan = policy.plan(List.of(b, a), 3, 1);

        assertThat(plan.copiesFor("a")).hasValue(3);
        assertThat(plan.copiesFor("b")).hasValue(2);
        assertThat(policy.plan(List.of(a, b), 3, 1)).isEqualTo(plan);
        assertThat(plan.choices()).extracting(ReplicaChoice::vertexId).containsExactly("a", "b");
    }

    @Test
    void operatorsWithoutStateGetTheMinimumAndCostNothing() {
        OperatorCost stateless = cost("stateless", 8, 0, 9000, 10_000, 16);
        OperatorCost stateful = cost("stateful", 2, 10 * MIB, 100, 1000, 2);

        ReplicationPlan plan = costAware(3.0, 2, 3, 2).plan(List.of(stateless, stateful), 4, 2);

        assertThat(plan.copiesFor("stateless")).hasValue(2);
        assertThat(choice(plan, "stateless").reason()).isEqualTo("no state in the latest checkpoint");
        assertThat(plan.copiesFor("stateful")).hasValue(3); // the whole budget is the stateful operator's
        assertThat(plan.meanCopies()).isEqualTo(3.0);
    }

    @Test
    void uniformModeGivesEveryOperatorTheReplicationFactor() {
        OperatorCost expensive = cost("expensive", 4, 10 * MIB, 8000, 10_000, 8);
        OperatorCost cheap = cost("cheap", 4, 40 * MIB, 1000, 10_000, 1);
        ReplicationPolicy policy = new ReplicationPolicy(new ReplicationSettings(ReplicationMode.UNIFORM, 3.0, 1, 4, 2));

        ReplicationPlan plan = policy.plan(List.of(expensive, cheap), 4, 2);

        assertThat(plan.choices()).extracting(ReplicaChoice::copies).containsExactly(2, 2);
        assertThat(plan.choices()).extracting(ReplicaChoice::reason).containsOnly("uniform");
        assertThat(plan.defaultCopies()).isEqualTo(2);
        assertThat(plan.copiesFor("not-stateful")).isEmpty();
        assertThat(policy.plan(List.of(), 4, 2)).isEqualTo(ReplicationPlan.uniform(2));
        ReplicationPlan single = policy.plan(List.of(expensive), 1, 1);
        assertThat(single.copiesFor("expensive")).hasValue(1);
        assertThat(single.defaultCopies()).isEqualTo(1);
        assertThat(choice(single, "expensive").reason()).isEqualTo("uniform; ring has only 1 node");
    }

    @Test
    void copiesNeverExceedTheRing() {
        OperatorCost expensive = cost("expensive", 4, 10 * MIB, 8000, 10_000, 8);
        OperatorCost cheap = cost("cheap", 4, 40 * MIB, 1000, 10_000, 1);
        ReplicationPolicy policy = costAware(5.0, 2, 5, 3);

        ReplicationPlan three = policy.plan(List.of(expensive, cheap), 3, 3);
        assertThat(three.choices()).extracting(ReplicaChoice::copies).containsExactly(3, 3);
        assertThat(choice(three, "expensive").reason()).isEqualTo("highest failure cost per byte; ring has only 3 nodes");

        ReplicationPlan one = policy.plan(List.of(expensive, cheap), 1, 1);
        assertThat(one.choices()).extracting(ReplicaChoice::copies).containsExactly(1, 1);
        assertThat(one.defaultCopies()).isEqualTo(1);
    }

    /** Random tables: the budget, the bounds and determinism hold, and no budget that fits a copy is left unspent. */
    @Test
    void randomTablesKeepBudgetAndBounds() {
        Random random = new Random(22);
        for (int table = 0; table < 2000; table++) {
            int min = 1 + random.nextInt(3);
            int uniform = min + random.nextInt(2);
            int max = uniform + random.nextInt(3);
            double budget = min + random.nextInt(300) / 100.0;
            ReplicationSettings settings = new ReplicationSettings(ReplicationMode.COST_AWARE, budget, min, max, uniform);
            int ringSize = 1 + random.nextInt(6);
            int zones = 1 + random.nextInt(ringSize);
            List<OperatorCost> costs = new ArrayList<>();
            int operators = random.nextInt(8);
            for (int i = 0; i < operators; i++) {
                long state = random.nextInt(4) == 0 ? 0 : 1 + (long) (random.nextDouble() * random.nextDouble() * (1L << 34));
                double capacity = random.nextInt(5) == 0 ? Double.POSITIVE_INFINITY : 1 + random.nextInt(100_000);
                double input = random.nextInt(10) == 0 ? capacity * 1.5 : random.nextDouble() * Math.min(capacity, 1e5);
                costs.add(cost("v" + random.nextInt(1000) + "-" + i, 1 + random.nextInt(8), state,
                        Double.isInfinite(input) ? 1e6 : input, capacity, 1 + random.nextInt(32)));
            }
            String where = "table " + table + " " + settings + " ring " + ringSize + ": " + costs;

            ReplicationPlan plan = new ReplicationPolicy(settings).plan(costs, ringSize, zones);

            if (!plan.choices().isEmpty()) { // without choices the mean is the default, which spends nothing
                assertThat(plan.meanCopies()).as(where).isLessThanOrEqualTo(budget);
            }
            int cap = Math.min(max, ringSize);
            BigInteger bytes = BigInteger.ZERO;
            BigInteger spent = BigInteger.ZERO;
            for (ReplicaChoice c : plan.choices()) {
                assertThat(c.copies()).as(where).isBetween(Math.min(min, ringSize), cap);
                assertThat(c.zones()).as(where).isEqualTo(Math.min(c.copies(), zones));
                bytes = bytes.add(BigInteger.valueOf(c.stateBytes()));
                spent = spent.add(BigInteger.valueOf(c.stateBytes() * c.copies()));
            }
            for (ReplicaChoice c : plan.choices()) {
                if (c.stateBytes() > 0 && c.copies() < cap) {
                    BigInteger more = spent.add(BigInteger.valueOf(c.stateBytes()));
                    assertThat(ReplicationPlan.mean(more, bytes)).as(where + ": " + c).isGreaterThan(budget);
                }
            }
            List<OperatorCost> shuffled = new ArrayList<>(costs);
            Collections.shuffle(shuffled, random);
            assertThat(new ReplicationPolicy(settings).plan(shuffled, ringSize, zones)).as(where).isEqualTo(plan);
        }
    }

    @Test
    void badSettingsAndRingsAreRejected() {
        assertThatThrownBy(() -> new ReplicationSettings(ReplicationMode.COST_AWARE, 2, 0, 3, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minCopies (0)");
        assertThatThrownBy(() -> new ReplicationSettings(ReplicationMode.COST_AWARE, 3, 3, 3, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("uniformCopies (2)");
        assertThatThrownBy(() -> new ReplicationSettings(ReplicationMode.COST_AWARE, 2, 2, 1, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxCopies (1)");
        assertThatThrownBy(() -> new ReplicationSettings(ReplicationMode.COST_AWARE, 1.5, 2, 3, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("budget").hasMessageContaining("1.5");
        assertThatThrownBy(() -> new ReplicationSettings(ReplicationMode.COST_AWARE, Double.NaN, 2, 3, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("budget");
        ReplicationPolicy policy = costAware(2, 2, 3, 2);
        assertThatThrownBy(() -> policy.plan(List.of(), 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ringSize 0");
        assertThatThrownBy(() -> policy.plan(List.of(), 2, 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("zones 3");
        OperatorCost a = cost("a", 1, 1, 0, 1, 1);
        assertThatThrownBy(() -> policy.plan(List.of(a, a), 2, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Two costs for vertex a");
    }

    static OperatorCost cost(String id, int parallelism, long stateBytes, double input, double capacity, int region) {
        return FailureCostModel.cost(new OperatorProfile(id, "op " + id, parallelism, stateBytes, input, capacity,
                region), FACTS);
    }

    private static ReplicationPolicy costAware(double budget, int min, int max, int uniform) {
        return new ReplicationPolicy(new ReplicationSettings(ReplicationMode.COST_AWARE, budget, min, max, uniform));
    }

    private static ReplicaChoice choice(ReplicationPlan plan, String vertexId) {
        return plan.choices().stream().filter(c -> c.vertexId().equals(vertexId)).findFirst().orElseThrow();
    }
}
