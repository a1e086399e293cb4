package io.sr3.flink.ring;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ConsistentHashTest {

    private static List<Member> members(int count, String... zones) {
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            members.add(new Member("10.0.0." + i, 7000, zones.length == 0 ? "" : zones[i % zones.length]));
        }
        return members;
    }

    @Test
    void successorsListEveryMemberOnceInAStableOrder() {
        ConsistentHash ring = ConsistentHash.of(members(7), 32);
        for (int k = 0; k < 100; k++) {
            List<Member> order = ring.successors("key-" + k);
            assertThat(order).hasSize(7).doesNotHaveDuplicates();
            assertThat(ConsistentHash.of(members(7), 32).successors("key-" + k)).isEqualTo(order);
        }
    }

    @Test
    void placementPutsTheWriterFirstThenDistinctSuccessors() {
        List<Member> all = members(5);
        ConsistentHash ring = ConsistentHash.of(all, 32);
        for (Member writer : all) {
            List<Member> replicas = ring.placement("block", writer, 3);
            assertThat(replicas).hasSize(3).doesNotHaveDuplicates();
            assertThat(replicas.get(0)).isEqualTo(writer);
        }
    }

    @Test
    void placementWithoutWriterFollowsTheRing() {
        ConsistentHash ring = ConsistentHash.of(members(5), 32);
        assertThat(ring.placement("manifest", null, 2)).isEqualTo(ring.successors("manifest").subList(0, 2));
    }

    @Test
    void placementIsCappedByRingSize() {
        ConsistentHash ring = ConsistentHash.of(members(2), 8);
        assertThat(ring.placement("k", null, 5)).hasSize(2);
        assertThat(ConsistentHash.of(List.of(), 8).placement("k", null, 2)).isEmpty();
    }

    @Test
    void replicasPreferDistinctZones() {
        // 6 nodes in 3 zones: any 3 replicas must cover all 3 zones.
        ConsistentHash ring = ConsistentHash.of(members(6, "a", "b", "c"), 32);
        for (int k = 0; k < 200; k++) {
            Member writer = ring.members().get(k % 6);
            List<Member> replicas = ring.placement("key-" + k, writer, 3);
            assertThat(new HashSet<>(replicas.stream().map(Member::zone).toList())).hasSize(3);
        }
    }

    @Test
    void keysSpreadEvenlyAcrossMembers() {
        ConsistentHash ring = ConsistentHash.of(members(8), 64);
        Map<Member, Integer> owned = new HashMap<>();
        int keys = 20_000;
        for (int k = 0; k < keys; k++) {
            owned.merge(ring.successors("block-" + k).get(0), 1, Integer::sum);
        }
        double fair = keys / 8.0;
        assertThat(owned).hasSize(8);
        assertThat(owned.values()).allSatisfy(n -> assertThat(n).isBetween((int) (fair * 0.6), (int) (fair * 1.4)));
    }

    @Test
    void removingAMemberOnlyMovesItsOwnKeys() {
        List<Member> all = members(6);
        ConsistentHash before = ConsistentHash.of(all, 64);
        Member removed = all.get(3);
        List<Member> rest = new ArrayList<>(all);
        rest.remove(removed);
        ConsistentHash after = before.withMembers(rest);
        for (int k = 0; k < 2000; k++) {
            Member owner = before.successors("key-" + k).get(0);
            if (!owner.equals(removed)) {
                assertThat(after.successors("key-" + k).get(0)).isEqualTo(owner);
            }
        }
    }

    @Test
    void memberIdsRoundTrip() {
        Member member = new Member("host.example", 6130, "zone-1");
        assertThat(Member.fromId(member.id()).sameNode(member)).isTrue();
        assertThat(MemberCodec.decodeList(MemberCodec.encodeList(List.of(member)))).containsExactly(member);
    }
}
