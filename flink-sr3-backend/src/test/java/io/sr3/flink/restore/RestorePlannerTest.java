package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class RestorePlannerTest {

    private static final long MIB = 1024 * 1024;
    private static final Link LAN = new Link(1000 * MIB, Duration.ofMillis(0));
    private static final Link WAN = new Link(50 * MIB, Duration.ofMillis(40));

    private final RestorePlanner planner = new RestorePlanner(3);

    /** {@code count} blocks of {@code size}, each held by two of {@code holders} nodes, round robin. */
    private static List<BlockSource> blocks(int count, long size, int holders) {
        List<BlockSource> blocks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            blocks.add(new BlockSource("b-" + i, size, List.of("h" + (i % holders), "h" + ((i + 1) % holders))));
        }
        return blocks;
    }

    private static Map<String, Link> all(int holders, Link link) {
        Map<String, Link> links = new HashMap<>();
        for (int h = 0; h < holders; h++) {
            links.put("h" + h, link);
        }
        return links;
    }

    private static Map<String, Link> allPairs(int holders, Link link) {
        Map<String, Link> links = new HashMap<>();
        for (int a = 0; a < holders; a++) {
            for (int b = 0; b < holders; b++) {
                links.put("h" + a + "->h" + b, link);
            }
        }
        return links;
    }

    static Stream<Arguments> scenarios() {
        return Stream.of(
                // name, blocks, network, expected structure
                Arguments.of("lan: fast links, no incast loss -> star",
                        blocks(64, 4 * MIB, 4), NetworkModel.uniform(LAN, 1000 * MIB), Structure.STAR),
                Arguments.of("incast: 12 senders into a node that loses most of its inbound to fan-in -> tree",
                        blocks(120, 4 * MIB, 12),
                        new NetworkModel(all(12, LAN), allPairs(12, LAN), LAN, 1000 * MIB, 3, 1.0, Duration.ofMillis(1)),
                        Structure.TREE),
                Arguments.of("wan-chain: holders close together, far from the recovering node, one good exit -> line",
                        blocks(64, 4 * MIB, 4),
                        new NetworkModel(Map.of("h0", WAN, "h1", WAN, "h2", WAN, "h3", new Link(400 * MIB, Duration.ofMillis(5))),
                                allPairs(4, LAN), WAN, 400 * MIB, 1, 4.0, Duration.ofMillis(1)),
                        Structure.LINE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void picksTheStructureTheModelPredictsFastest(String name, List<BlockSource> blocks, NetworkModel network, Structure expected) {
        RestorePlan plan = planner.plan(blocks, network, null);
        assertThat(plan.structure()).as(name + " " + plan.predictedSeconds()).isEqualTo(expected);
        assertThat(plan.predicted()).isEqualTo(plan.predictedSeconds().values().stream().min(Double::compare).orElseThrow());
        assertThat(plan.note()).isNull();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyBlockIsSentExactlyOnceByOneOfItsHolders(String name, List<BlockSource> blocks, NetworkModel network, Structure ignored) {
        RestorePlan plan = planner.plan(blocks, network, null);
        Set<String> seen = new HashSet<>();
        plan.assignment().forEach((holder, assigned) -> {
            for (BlockSource block : assigned) {
                assertThat(block.holders()).contains(holder);
                assertThat(seen.add(block.key())).as("block %s assigned twice", block.key()).isTrue();
            }
        });
        assertThat(seen).hasSize(blocks.size());
        assertThat(plan.totalBytes()).isEqualTo(blocks.stream().mapToLong(BlockSource::bytes).sum());
    }

    /** Two holders into a node that loses {@code incastPenalty} of its inbound to a second sender: line saves that loss. */
    private static NetworkModel incastOfTwo(double incastPenalty) {
        return new NetworkModel(Map.of(), Map.of(), LAN, 100 * MIB, 1, incastPenalty, Duration.ZERO);
    }

    @Test
    void aRelayPredictedOnlySlightlyFasterLosesToStar() {
        RestorePlan plan = planner.plan(blocks(64, 4 * MIB, 2), incastOfTwo(0.05), null);

        assertThat(plan.predictedSeconds().get(Structure.LINE)).isLessThan(plan.predictedSeconds().get(Structure.STAR));
        assertThat(plan.structure()).isEqualTo(Structure.STAR);
        assertThat(plan.note()).isEqualTo("star: line predicted only 5% faster (more relaying must win by 10%)");
    }

    @Test
    void aRelayThatClearlyWinsIsChosen() {
        RestorePlan plan = planner.plan(blocks(64, 4 * MIB, 2), incastOfTwo(0.5), null);

        assertThat(plan.structure()).isEqualTo(Structure.LINE);
        assertThat(plan.note()).isNull();
    }

    /**
     * Three holders into a node that loses 8% of its inbound per sender beyond the first, with a
     * tree of fan-in 2: the line's last hop alone is fastest, the tree (two senders) 8% slower,
     * star (three) 16% slower.
     */
    @Test
    void aLinePredictedOnlySlightlyFasterLosesToATree() {
        NetworkModel network = new NetworkModel(Map.of(), Map.of(), LAN, 100 * MIB, 1, 0.08, Duration.ZERO);
        RestorePlan plan = new RestorePlanner(2).plan(blocks(60, 4 * MIB, 3), network, null);

        assertThat(plan.predictedSeconds().get(Structure.LINE)).isLessThan(plan.predictedSeconds().get(Structure.TREE));
        assertThat(plan.structure()).isEqualTo(Structure.TREE);
        assertThat(plan.note()).isEqualTo("tree: line predicted only 7% faster (more relaying must win by 10%)");
    }

    /** A second subtask restoring while the first still pulls 400 MiB from h0: its blocks go to h1 where they can. */
    @Test
    void bytesPendingForOtherRestoresSteerBlocksAway() {
        List<BlockSource> shared = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            shared.add(new BlockSource("b" + i, 4 * MIB, List.of("h0", "h1")));
        }
        NetworkModel network = NetworkModel.uniform(new Link(100 * MIB, Duration.ZERO), 1000 * MIB);

        RestorePlan alone = planner.plan(shared, network, null);
        assertThat(alone.assignment().get("h0")).hasSize(4);

        RestorePlan alongside = planner.plan(shared, network, null, Map.of("h0", 400L * MIB));
        assertThat(alongside.assignment()).doesNotContainKey("h0");
        assertThat(alongside.assignment().get("h1")).hasSize(8);
    }

    @Test
    void starPredictionOnAUniformLanIsBytesOverInbound() {
        RestorePlan plan = planner.plan(blocks(100, MIB, 4), NetworkModel.uniform(new Link(100 * MIB, Duration.ZERO), 200 * MIB), null);
        // 100 MiB from 4 senders of 100 MiB/s each into 200 MiB/s: 0.5 s.
        assertThat(plan.predictedSeconds().get(Structure.STAR)).isCloseTo(0.5, within(1e-9));
        // The last hop of a line carries everything on one 100 MiB/s stream: 1 s.
        assertThat(plan.predictedSeconds().get(Structure.LINE)).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void loadIsBalancedSoNoHolderIsEverybodysBottleneck() {
        // h0 holds a replica of every block; h1..h3 one each of a third. A naive "first holder" plan sends all from h0.
        List<BlockSource> blocks = new ArrayList<>();
        for (int i = 0; i < 90; i++) {
            blocks.add(new BlockSource("b-" + i, MIB, List.of("h0", "h" + (1 + i % 3))));
        }
        RestorePlan plan = planner.plan(blocks, NetworkModel.uniform(LAN, 4000 * MIB), Structure.STAR);
        assertThat(plan.assignment()).hasSize(4);
        plan.assignment().values().forEach(assigned -> assertThat(assigned.size()).isBetween(20, 25));
    }

    @Test
    void forcedStructureIsUsedWhenItCanRun() {
        RestorePlan plan = planner.plan(blocks(64, MIB, 4), NetworkModel.uniform(LAN, 1000 * MIB), Structure.LINE);
        assertThat(plan.structure()).isEqualTo(Structure.LINE);
        assertThat(plan.chain()).hasSize(4);
        assertThat(plan.note()).isNull();
    }

    @Test
    void forcedTreeWithOneHolderFallsBackAndSaysSo() {
        List<BlockSource> blocks = List.of(new BlockSource("b-0", MIB, List.of("h0")), new BlockSource("b-1", MIB, List.of("h0")));
        RestorePlan plan = planner.plan(blocks, NetworkModel.uniform(LAN, 1000 * MIB), Structure.TREE);
        assertThat(plan.structure()).isEqualTo(Structure.STAR);
        assertThat(plan.note()).contains("tree cannot run with 1 sender").contains("using star");
    }

    @Test
    void treeRespectsItsFanIn() {
        RestorePlan plan = planner.plan(blocks(200, MIB, 10), NetworkModel.uniform(LAN, 1000 * MIB), Structure.TREE);
        Map<String, Integer> children = new HashMap<>();
        plan.parents().values().forEach(p -> children.merge(p, 1, Integer::sum));
        assertThat(children.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(3));
        assertThat(plan.parents()).hasSize(10);
    }

    @Test
    void emptyRestoreCostsNothing() {
        RestorePlan plan = planner.plan(List.of(), NetworkModel.uniform(LAN, 1000 * MIB), null);
        assertThat(plan.structure()).isEqualTo(Structure.STAR);
        assertThat(plan.predicted()).isZero();
    }
}
