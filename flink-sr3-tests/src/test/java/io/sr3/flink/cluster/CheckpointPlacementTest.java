package io.sr3.flink.cluster;

import io.sr3.flink.cluster.CheckpointPlacement.FileCopies;
import io.sr3.flink.cluster.CheckpointPlacement.Victims;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Which pair of members a checkpoint can lose without losing anything but the protected vertex's copies. */
class CheckpointPlacementTest {

    private static FileCopies file(String vertex, Set<String> manifest, Set<String> block) {
        return new FileCopies("sr3:///c/chk-1/" + vertex, vertex, block.size(), manifest, List.of(block));
    }

    @Test
    void picksTheFirstPairOfABlocksHoldersThatHoldsNoOtherFileEntirely() {
        CheckpointPlacement checkpoint = new CheckpointPlacement(1, "sr3:///c/chk-1", List.of(
                file("costly", Set.of("a", "b", "c"), Set.of("a", "b", "c")),
                file("cheap", Set.of("c", "d"), Set.of("a", "b")), // {a, b} holds its block
                file("_metadata", Set.of("a", "c"), Set.of("b", "d")))); // {a, c} holds its manifest
        Victims victims = checkpoint.pairHoldingOnly("costly");
        assertThat(victims).isNotNull();
        assertThat(victims.members()).isEqualTo(Set.of("b", "c"));
        assertThat(victims.block()).isEqualTo("block 0 on [a, b, c]");
    }

    @Test
    void noPairWhenEveryPairOfTheHoldersHoldsSomeOtherFile() {
        CheckpointPlacement checkpoint = new CheckpointPlacement(1, "sr3:///c/chk-1", List.of(
                file("costly", Set.of("a", "b"), Set.of("a", "b", "c")),
                file("cheap", Set.of("a", "b"), Set.of("c", "d")),
                file("source", Set.of("a", "d"), Set.of("a", "c")),
                file("_metadata", Set.of("b", "c"), Set.of("b", "d"))));
        assertThat(checkpoint.pairHoldingOnly("costly")).isNull();
    }

    @Test
    void withTwoCopiesThePairIsTheBlocksOwnHolders() {
        CheckpointPlacement checkpoint = new CheckpointPlacement(1, "sr3:///c/chk-1", List.of(
                file("costly", Set.of("c", "d"), Set.of("a", "b")),
                file("cheap", Set.of("c", "d"), Set.of("a", "c"))));
        assertThat(checkpoint.pairHoldingOnly("costly").members()).isEqualTo(Set.of("a", "b"));
        assertThat(checkpoint.of("costly").get(0).lostWith(Set.of("a", "b"))).isTrue();
        assertThat(checkpoint.of("costly").get(0).hasCopies(2)).isTrue();
    }
}
