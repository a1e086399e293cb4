package io.sr3.flink.node;

import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.Membership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The copies of one key on many nodes, asked at once, for {@link RingStorage#readCopies}:
 * {@link #done} completes once every node answered, or once a copy was found and every node of
 * the key's placement answered. Counts and copies are read under this object's lock. {@link
 * #readCopiesAsync} runs one such read and decides what finding no copy means.
 */
@ThreadSafe
final class ParallelRead {

    private static final Logger LOG = LoggerFactory.getLogger(ParallelRead.class);

    private final RingNode node;
    private final String key;
    private final List<Member> asked;
    private final List<Member> placement;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    @GuardedBy("this") final List<RingStorage.Copy> copies = new ArrayList<>();
    @GuardedBy("this") final Map<String, String> failures = new LinkedHashMap<>();
    @GuardedBy("this") private final List<Member> answered = new ArrayList<>();
    @GuardedBy("this") int notFound;

    ParallelRead(RingNode node, String key, List<Member> asked, List<Member> placement) {
        this.node = node;
        this.key = key;
        this.asked = asked;
        this.placement = placement;
    }

    /**
     * Reads every copy of {@code key} by key alone, asking every member that is not suspected,
     * and, when none was found, decides between absent for certain and unavailable as {@link
     * RingStorage#readCopies} describes. The future completes on a network thread.
     *
     * @param everyNode whether to wait for every asked node, not only the key's placement
     * @return every copy found; empty if the key is absent for certain; fails with {@link
     *     ReplicasUnreachableException} if the key may be held only by nodes that could not be asked
     */
    static CompletableFuture<List<RingStorage.Copy>> readCopiesAsync(RingNode node, String key, String description,
            boolean everyNode) {
        ConsistentHash ring = node.membership().ring();
        List<Member> asked = new ArrayList<>();
        Map<String, String> unreachable = new LinkedHashMap<>();
        for (Member member : ring.successors(key)) {
            if (node.membership().isSuspected(member)) {
                unreachable.put(member.id(), "suspected: its last probe went unanswered");
            } else {
                asked.add(member);
            }
        }
        List<Member> placement = new ArrayList<>();
        for (Member m : ring.placement(key, null, Math.min(node.config().replicationFactor(), ring.size()))) {
            if (m.isIn(asked)) {
                placement.add(m);
            }
        }
        ParallelRead read = new ParallelRead(node, key, asked, everyNode ? asked : placement);
        read.start();
        return read.done.thenApply(ignored -> {
            try {
                return read.decide(description, unreachable);
            } catch (ReplicasUnreachableException e) {
                throw new CompletionException(e);
            }
        });
    }

    /** What the answers mean once {@link #done}: every copy found, none if absent for certain. */
    private synchronized List<RingStorage.Copy> decide(String description, Map<String, String> unreachable)
            throws ReplicasUnreachableException {
        unreachable.putAll(failures);
        if (!copies.isEmpty()) {
            return List.copyOf(copies);
        }
        for (Membership.Departure departure : node.membership().departedWithin(mayHoldOnlyCopiesFor(node))) {
            unreachable.put(departure.member().id(), "removed from the ring recently; may come back");
        }
        int known = notFound + unreachable.size();
        int needed = Math.max(1, known - node.storage().writeQuorum() + 1);
        if (notFound >= needed) {
            if (!unreachable.isEmpty()) {
                LOG.debug("[{}] {} is on none of the {} nodes that answered; unreachable: {}",
                        node.self().id(), description, notFound, unreachable);
            }
            return List.of();
        }
        throw new ReplicasUnreachableException(description, key, notFound, needed, unreachable);
    }

    /**
     * How long after its removal a member still counts as a possible holder of keys nobody live
     * holds: {@code sr3.repair.delay} plus the failure detector's timeout. By then repair has
     * copied what it held to live nodes, unless none of them held it either; a key all of whose
     * holders stay away longer reads as absent. (The orphan sweep waits the longer grace period.)
     */
    private static Duration mayHoldOnlyCopiesFor(RingNode node) {
        return node.config().durability().repairDelay().plus(node.config().failureTimeout());
    }

    void start() {
        if (asked.isEmpty()) {
            done.complete(null);
            return;
        }
        for (Member member : asked) {
            node.get(member, key).whenComplete((data, error) -> onAnswer(member, data, error));
        }
    }

    private synchronized void onAnswer(Member member, @Nullable byte[] data, @Nullable Throwable error) {
        answered.add(member);
        if (error == null) {
            copies.add(new RingStorage.Copy(member, data));
        } else {
            Throwable cause = PeerClient.unwrap(error);
            if (cause instanceof IOException io && RingStorage.isNotFound(io)) {
                notFound++;
            } else {
                failures.put(member.id(), String.valueOf(cause.getMessage()));
            }
        }
        if (answered.size() == asked.size() || (!copies.isEmpty() && answeredAll(placement))) {
            done.complete(null);
        }
    }

    @GuardedBy("this")
    private boolean answeredAll(List<Member> members) {
        for (Member m : members) {
            if (!m.isIn(answered)) {
                return false;
            }
        }
        return true;
    }
}
