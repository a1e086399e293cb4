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
    /** When each member (by node id) last answered. */
    private final Map<String, Long> lastAnswerNanos = new ConcurrentHashMap<>();
    /** Members (by node id) that a peer's answer named but that have not answered themselves. */
    private final Map<String, Member> hearsay = new ConcurrentHashMap<>();
    /** Since when each address that is no member's (a seed, a hearsay member) has been silent. */
    private final Map<String, Long> silentAddresses = new ConcurrentHashMap<>();
    private final Map<String, Long> seedFailuresLogged = new ConcurrentHashMap<>();

    FailureDetector(RingNode node, LongSupplier nanoClock) {
        this.node = node;
        this.nanoClock = nanoClock;
    }

    /** Pings every candidate address once; the future completes when all answered or timed out. */
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
        targets.forEach((address, socket) -> probes.add(probe(address, socket, deadline)));
        return CompletableFuture.allOf(probes.toArray(new CompletableFuture[0]));
    }

    private Duration pingDeadline() {
        Duration timeout = node.config().failureTimeout().dividedBy(2);
        return timeout.compareTo(node.config().requestTimeout()) < 0 ? timeout : node.config().requestTimeout();
    }

    private CompletableFuture<Void> probe(String address, InetSocketAddress socket, Duration deadline) {
        return node.ping(socket, deadline).handle((members, error) -> {
            long now = nanoClock.getAsLong();
            if (error == null && !members.isEmpty()) {
                Member responder = members.get(0);
                lastAnswerNanos.put(responder.nodeId(), now);
                hearsay.remove(responder.nodeId());
                node.membership().add(responder);
                for (Member other : node.membership().at(address)) {
                    if (!other.sameNode(responder)) {
                        onSilence(other, now, "node " + responder.nodeId() + " answers at its address now");
                    }
                }
                for (Member learned : members.subList(1, members.size())) {
                    if (!node.membership().isLive(learned) && !learned.sameNode(node.self())) {
                        hearsay.putIfAbsent(learned.nodeId(), learned);
                    }
                }
                silentAddresses.remove(address);
                seedFailuresLogged.remove(address);
            } else {
                List<Member> atAddress = node.membership().at(address);
                for (Member member : atAddress) {
                    onSilence(member, now, rootMessage(error));
                }
                if (atAddress.isEmpty()) {
                    onSilentAddress(address, now, error);
                }
            }
            return null;
        });
    }

    /**
     * A member did not answer: suspected at once, removed from placement once it has been silent
     * for the failure timeout.
     */
    private void onSilence(Member member, long now, String why) {
        long last = lastAnswerNanos.computeIfAbsent(member.nodeId(), k -> now);
        long silentNanos = now - last;
        if (silentNanos < node.config().failureTimeout().toNanos()) {
            node.membership().suspect(member, "no answer to a probe: " + why);
            return;
        }
        node.membership().remove(member, "no answer for " + (silentNanos / 1_000_000) + " ms: " + why);
        lastAnswerNanos.remove(member.nodeId());
    }

    /** A seed or a member known by hearsay did not answer: forgotten (hearsay) or logged once (seeds) after the timeout. */
    private void onSilentAddress(String address, long now, Throwable error) {
        long since = silentAddresses.computeIfAbsent(address, k -> now);
        if (now - since < node.config().failureTimeout().toNanos()) {
            return;
        }
        boolean wasHearsay = hearsay.values().removeIf(m -> m.id().equals(address));
        if (!wasHearsay && seedFailuresLogged.putIfAbsent(address, now) == null) {
            LOG.info("[{}] ring peer {} does not answer ({}); will keep trying", node.self().id(), address,
                    rootMessage(error));
        }
        silentAddresses.remove(address);
    }

    private static String rootMessage(Throwable error) {
        Throwable t = error;
        while (t != null && t.getCause() != null && t.getMessage() == null) {
            t = t.getCause();
        }
        return t == null ? "no answer" : String.valueOf(t.getMessage());
    }
}
