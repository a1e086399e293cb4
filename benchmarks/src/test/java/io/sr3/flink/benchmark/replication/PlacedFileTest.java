package io.sr3.flink.benchmark.replication;

import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The benchmark's survival check: a file is lost exactly when some block or its manifest has no live holder. */
class PlacedFileTest {

    @Test
    void aBlockOnTwoDeadNodesIsLostAndOneWithASurvivingCopyIsNot() {
        // manifest on nodes 2 and 3; block 0 on nodes 0 and 1, block 1 on nodes 1 and 2
        PlacedFile file = new PlacedFile(0b1100, new long[] {0b0011, 0b0110});

        assertThat(file.survives(0b0011)).as("nodes 0 and 1: block 0 has no copy left").isFalse();
        assertThat(file.survives(0b0001)).as("node 0: block 0 still on node 1").isTrue();
        assertThat(file.survives(0b0101)).as("nodes 0 and 2: every block and the manifest keep a copy").isTrue();
        assertThat(file.survives(0b1100)).as("nodes 2 and 3: the manifest is gone").isFalse();
        assertThat(file.survives(0)).isTrue();
    }

    @Test
    void placedWithTheRealRingAFileDiesWithTheHoldersOfOneBlockAndOutlivesAnyOneNode() {
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            members.add(new Member("tm-" + i, "10.0.0." + (i + 1), 7100, "zone-" + (i % 3)));
        }
        ConsistentHash ring = ConsistentHash.of(members, 64);
        Member writer = ring.members().get(4);
        PlacedFile file = PlacedFile.place(ring, "/cp/job/shared/f", "id-1", 8, writer, 2, 2);

        long blockZero = PlacedFile.mask(ring, ring.placement("b-id-1-0", writer, 2));
        assertThat(Long.bitCount(blockZero)).isEqualTo(2);
        assertThat(blockZero & (1L << 4)).as("the writer holds the first copy").isNotZero();
        assertThat(file.survives(blockZero)).isFalse();
        for (int node = 0; node < ring.size(); node++) {
            assertThat(file.survives(1L << node)).as("only node %d dead", node).isTrue();
        }
        PlacedFile three = PlacedFile.place(ring, "/cp/job/shared/f", "id-1", 8, writer, 3, 3);
        assertThat(three.survives(blockZero)).as("a third copy outlives the first two's holders").isTrue();
    }

    @Test
    void theManifestKeyIsTheWritersForm() {
        assertThat(PlacedFile.manifestKey("/a/b")).matches("m-[0-9a-f]{16}-[0-9a-f]{16}");
        assertThat(PlacedFile.manifestKey("/a/b")).startsWith(PlacedFile.manifestKey("/a/c").substring(0, 19));
    }

    @Test
    void aBlockWithoutHoldersIsRejected() {
        assertThatThrownBy(() -> new PlacedFile(1, new long[] {0b1, 0}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Block 1");
    }
}
