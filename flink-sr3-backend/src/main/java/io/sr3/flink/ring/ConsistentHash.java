package io.sr3.flink.ring;

import javax.annotation.Nullable;
import javax.annotation.concurrent.Immutable;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

/**
 * An immutable snapshot of ring ownership: members placed on a 64-bit hash ring through
 * virtual nodes.
 *
 * <p>Invariants: every member owns exactly {@code virtualNodes} tokens; {@link #successors} lists
 * every member exactly once, in ring order from the key's position; the same members and key
 * always give the same order, on every node. A membership change is a new snapshot
 * ({@link #withMembers}), never a mutation.
 */
@Immutable
public final class ConsistentHash {

    private final int virtualNodes;
    private final List<Member> members;
    private final NavigableMap<Long, Member> tokens;

    private ConsistentHash(Collection<Member> members, int virtualNodes) {
        if (virtualNodes < 1) {
            throw new IllegalArgumentException("virtualNodes must be >= 1, was " + virtualNodes);
        }
        this.virtualNodes = virtualNodes;
        Map<String, Member> byId = new LinkedHashMap<>();
        for (Member member : members) {
            byId.put(member.nodeId(), member);
        }
        List<Member> sorted = new ArrayList<>(byId.values());
        sorted.sort((a, b) -> a.nodeId().compareTo(b.nodeId()));
        this.members = Collections.unmodifiableList(sorted);
        TreeMap<Long, Member> ring = new TreeMap<>();
        for (Member member : sorted) {
            for (int i = 0; i < virtualNodes; i++) {
                // On the rare token collision the smaller node id keeps the token, on every node alike.
                ring.putIfAbsent(hash(member.nodeId() + "#" + i), member);
            }
        }
        this.tokens = Collections.unmodifiableNavigableMap(ring);
    }

    public static ConsistentHash of(Collection<Member> members, int virtualNodes) {
        return new ConsistentHash(members, virtualNodes);
    }

    public ConsistentHash withMembers(Collection<Member> newMembers) {
        return new ConsistentHash(newMembers, virtualNodes);
    }

    /** The members, sorted by node id. */
    public List<Member> members() {
        return members;
    }

    public int size() {
        return members.size();
    }

    public boolean contains(Member member) {
        for (Member m : members) {
            if (m.sameNode(member)) {
                return true;
            }
        }
        return false;
    }

    /** Every member exactly once, in ring order starting at the key's position. */
    public List<Member> successors(String key) {
        List<Member> order = new ArrayList<>(members.size());
        if (tokens.isEmpty()) {
            return order;
        }
        Set<String> seen = new HashSet<>();
        long position = hash(key);
        for (Member member : tokens.tailMap(position, true).values()) {
            if (seen.add(member.nodeId())) {
                order.add(member);
            }
        }
        for (Member member : tokens.headMap(position, false).values()) {
            if (order.size() == members.size()) {
                break;
            }
            if (seen.add(member.nodeId())) {
                order.add(member);
            }
        }
        return order;
    }

    /**
     * The nodes that hold a key's replicas, in preference order: the writer first when it is a
     * member (so the writer can recover locally), then successors in distinct zones, then any
     * remaining successors. Returns fewer than {@code replicas} nodes only if the ring is smaller.
     */
    public List<Member> placement(String key, @Nullable Member writer, int replicas) {
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas must be >= 1, was " + replicas);
        }
        List<Member> chosen = new ArrayList<>(replicas);
        Set<String> zones = new HashSet<>();
        if (writer != null && contains(writer)) {
            Member canonical = canonical(writer);
            chosen.add(canonical);
            zones.add(canonical.effectiveZone());
        }
        List<Member> order = successors(key);
        for (Member member : order) {
            if (chosen.size() == replicas) {
                return chosen;
            }
            if (!isChosen(chosen, member) && zones.add(member.effectiveZone())) {
                chosen.add(member);
            }
        }
        for (Member member : order) {
            if (chosen.size() == replicas) {
                break;
            }
            if (!isChosen(chosen, member)) {
                chosen.add(member);
            }
        }
        return chosen;
    }

    private Member canonical(Member member) {
        for (Member m : members) {
            if (m.sameNode(member)) {
                return m;
            }
        }
        return member;
    }

    private static boolean isChosen(List<Member> chosen, Member member) {
        for (Member m : chosen) {
            if (m.sameNode(member)) {
                return true;
            }
        }
        return false;
    }

    /** The ring position of a key: the first 8 bytes of its MD5, well spread and stable across JVMs. */
    static long hash(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("MD5").digest(key.getBytes(StandardCharsets.UTF_8));
            long value = 0;
            for (int i = 0; i < 8; i++) {
                value = (value << 8) | (digest[i] & 0xFF);
            }
            return value;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is not available in this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "ConsistentHash" + members;
    }
}
