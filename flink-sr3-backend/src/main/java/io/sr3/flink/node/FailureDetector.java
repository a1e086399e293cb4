package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Keeps membership current: each round pings every member, every seed, every other node of this
 * JVM and every member learned from a peer's answer.
 *
 * <p>A member that answers is live (and its member list is merged in: that is the gossip). A live
 * member whose probe goes unanswered is suspected at once, so reads and writes stop waiting for
 * it; one that has not answered for {@code failureTimeout} leaves placement. Members learned only
 * by hearsay join after they answer a ping themselves, so a dead node cannot be resurrected by a
 * peer with stale news.
 */
@ThreadSafe
final class FailureDetector {

    private static final Logger LOG = LoggerFactory.getLogger(FailureDetector.class);

    private final RingNode node;
    private final LongSupplier nanoClock;
    private final Map<String, Long> lastAnswerNanos = new ConcurrentHashMap<>();
    private final Map<String, Member> hearsay = new ConcurrentHashMap<>();
    private final Map<String, Long> seedFailuresLogged = new ConcurrentHashMap<>();

    FailureDetector(RingNode node, LongSupplier nanoClock) {
        this.node = node;
        this.nanoClock = nanoClock;
    }

    /** Pings every candidate once; the future completes when all answered or timed out. */
    CompletableFuture<Void> runRound() {
        Map<String, InetSocketAddress> targets = new LinkedHashMap<>();
        Member self = node.self();
        for (Member m : node.membership().members()) {
            targets.put(m.id(), m.address());
        }
        for (Member m : LocalRing.members()) {
            targets.put(m.id(), m.address());
        }
        for (Member m : hearsay.values()) {
            targets.put(m.id(), m.address());
        }
        for (String seed : node.config().seeds()) {
            try {
                Member seedMember = Member.fromId(seed);
                targets.putIfAbsent(seedMember.id(), new InetSocketAddress(seedMember.host(), seedMember.port()));
            } catch (IllegalArgumentException e) {
                LOG.warn("[{}] ignoring malformed seed '{}' in sr3.ring.seeds", self.id(), seed);
            }
        }
        targets.remove(self.id());
        Duration deadline = pingDeadline();
        List<CompletableFuture<Void>> probes = new ArrayList<>(targets.size());
        targets.forEach((id, address) -> probes.add(probe(id, address, deadline)));
        return CompletableFuture.allOf(probes.toArray(new CompletableFuture[0]));
    }

    private Duration pingDeadline() {
        Duration timeout = node.config().failureTimeout().dividedBy(2);
        return timeout.compareTo(node.config().requestTimeout()) < 0 ? timeout : node.config().requestTimeout();
    }

    private CompletableFuture<Void> probe(String id, InetSocketAddress address, Duration deadline) {
        return node.ping(address, deadline).handle((members, error) -> {
            long now = nanoClock.getAsLong();
            if (error == null && !members.isEmpty()) {
                Member responder = members.get(0);
                lastAnswerNanos.put(responder.id(), now);
                hearsay.remove(responder.id());
                node.membership().add(responder);
                for (Member learned : members.subList(1, members.size())) {
                    if (!node.membership().isLive(learned) && !learned.sameNode(node.self())) {
                        hearsay.putIfAbsent(learned.id(), learned);
                    }
                }
                seedFailuresLogged.remove(id);
            } else {
                onSilence(id, now, error);
            }
            return null;
        });
    }

    private void onSilence(String id, long now, Throwable error) {
        Long last = lastAnswerNanos.computeIfAbsent(id, k -> now);
        long silentNanos = now - last;
        Member member = null;
        for (Member m : node.membership().members()) {
            if (m.id().equals(id)) {
                member = m;
            }
        }
        if (member != null && silentNanos < node.config().failureTimeout().toNanos()) {
            node.membership().suspect(member, "no answer to a probe: " + rootMessage(error));
            return;
        }
        if (member != null) {
            node.membership().remove(member, "no answer for " + (silentNanos / 1_000_000) + " ms: " + rootMessage(error));
        }
        if (member == null && silentNanos < node.config().failureTimeout().toNanos()) {
            return;
        }
        if (hearsay.remove(id) == null && member == null && seedFailuresLogged.putIfAbsent(id, now) == null) {
            LOG.info("[{}] ring peer {} does not answer ({}); will keep trying", node.self().id(), id, rootMessage(error));
        }
        lastAnswerNanos.remove(id);
    }

    private static String rootMessage(Throwable error) {
        Throwable t = error;
        while (t != null && t.getCause() != null && t.getMessage() == null) {
            t = t.getCause();
        }
        return t == null ? "no answer" : String.valueOf(t.getMessage());
    }
}
