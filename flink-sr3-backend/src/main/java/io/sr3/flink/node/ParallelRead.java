package io.sr3.flink.node;

import io.sr3.flink.ring.Member;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The copies of one key on many nodes, asked at once, for {@link RingStorage#readCopies}:
 * {@link #done} completes once every node answered, or once a copy was found and every node of
 * the key's placement answered. Counts and copies are read under this object's lock.
 */
@ThreadSafe
final class ParallelRead {

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
