package io.sr3.flink.replication;

import io.sr3.flink.replication.FailoverRegions.Edge;
import io.sr3.flink.replication.FailoverRegions.Vertex;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Failover regions of streaming job graphs, checked subtask by subtask. */
class FailoverRegionsTest {

    @Test
    void aForwardChainKeepsEachSubtaskIndexApart() {
        List<Vertex> vertices = List.of(new Vertex("src", 3), new Vertex("map", 3), new Vertex("sink", 3));
        List<Edge> edges = List.of(forward("src", "map"), forward("map", "sink"));

        assertThat(FailoverRegions.regions(vertices, edges)).containsExactly(
                List.of("src[0]", "map[0]", "sink[0]"),
                List.of("src[1]", "map[1]", "sink[1]"),
                List.of("src[2]", "map[2]", "sink[2]"));
        assertThat(FailoverRegions.largestRegionSubtasks(vertices, edges))
                .containsExactly(Map.entry("src", 3), Map.entry("map", 3), Map.entry("sink", 3));
    }

    @Test
    void aRebalanceJoinsEverySubtaskOfTheJob() {
        List<Vertex> vertices = List.of(new Vertex("src", 2), new Vertex("map", 2), new Vertex("agg", 4));
        List<Edge> edges = List.of(forward("src", "map"), allToAll("map", "agg"));

        assertThat(FailoverRegions.regions(vertices, edges)).hasSize(1);
        assertThat(FailoverRegions.largestRegionSubtasks(vertices, edges))
                .containsExactly(Map.entry("src", 8), Map.entry("map", 8), Map.entry("agg", 8));
    }

    @Test
    void rescaleFourToTwoJoinsContiguousSources() {
        List<Vertex> vertices = List.of(new Vertex("a", 4), new Vertex("b", 2));

        assertThat(FailoverRegions.regions(vertices, List.of(forward("a", "b")))).containsExactly(
                List.of("a[0]", "a[1]", "b[0]"),
                List.of("a[2]", "a[3]", "b[1]"));
    }

    @Test
    void rescaleTwoToFourJoinsContiguousTargets() {
        List<Vertex> vertices = List.of(new Vertex("a", 2), new Vertex("b", 4));

        assertThat(FailoverRegions.regions(vertices, List.of(forward("a", "b")))).containsExactly(
                List.of("a[0]", "b[0]", "b[1]"),
                List.of("a[1]", "b[2]", "b[3]"));
    }

    @Test
    void unevenRescalesFollowFlinksRanges() {
        // 3 -> 2: target j reads sources [j*3/2, (j+1)*3/2): b0 <- a0, b1 <- a1, a2.
        assertThat(FailoverRegions.regions(List.of(new Vertex("a", 3), new Vertex("b", 2)), List.of(forward("a", "b"))))
                .containsExactly(List.of("a[0]", "b[0]"), List.of("a[1]", "a[2]", "b[1]"));
        // 2 -> 3: source i feeds targets [ceil(i*3/2), ceil((i+1)*3/2)): a0 -> b0, b1; a1 -> b2.
        List<Vertex> vertices = List.of(new Vertex("a", 2), new Vertex("b", 3));
        assertThat(FailoverRegions.regions(vertices, List.of(forward("a", "b"))))
                .containsExactly(List.of("a[0]", "b[0]", "b[1]"), List.of("a[1]", "b[2]"));
        assertThat(FailoverRegions.largestRegionSubtasks(vertices, List.of(forward("a", "b"))))
                .containsExactly(Map.entry("a", 3), Map.entry("b", 3));
    }

    @Test
    void twoDisconnectedPipelinesAreSeparateRegions() {
        List<Vertex> vertices = List.of(new Vertex("src1", 2), new Vertex("agg1", 2), new Vertex("src2", 3),
                new Vertex("map2", 3));
        List<Edge> edges = List.of(allToAll("src1", "agg1"), forward("src2", "map2"));

        assertThat(FailoverRegions.regions(vertices, edges)).containsExactly(
                List.of("src1[0]", "src1[1]", "agg1[0]", "agg1[1]"),
                List.of("src2[0]", "map2[0]"), List.of("src2[1]", "map2[1]"), List.of("src2[2]", "map2[2]"));
        assertThat(FailoverRegions.largestRegionSubtasks(vertices, edges)).containsExactly(Map.entry("src1", 4),
                Map.entry("agg1", 4), Map.entry("src2", 2), Map.entry("map2", 2));
    }

    @Test
    void aVertexWithoutEdgesIsOneRegionPerSubtask() {
        assertThat(FailoverRegions.largestRegionSubtasks(List.of(new Vertex("solo", 5)), List.of()))
                .containsExactly(Map.entry("solo", 1));
    }

    @Test
    void badGraphsAreRejected() {
        assertThatThrownBy(() -> FailoverRegions.largestRegionSubtasks(List.of(new Vertex("a", 1)),
                List.of(forward("a", "ghost")))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ghost");
        assertThatThrownBy(() -> FailoverRegions.largestRegionSubtasks(List.of(new Vertex("a", 1), new Vertex("a", 2)),
                List.of())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Duplicate vertex id a");
        assertThatThrownBy(() -> new Vertex("a", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parallelism");
    }

    private static Edge forward(String source, String target) {
        return new Edge(source, target, true);
    }

    private static Edge allToAll(String source, String target) {
        return new Edge(source, target, false);
    }
}
