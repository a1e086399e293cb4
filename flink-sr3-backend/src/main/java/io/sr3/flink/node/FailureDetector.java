package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.SeedAddresses;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Keeps membership current: each round pings every member, every seed, every other node of this
 * JVM and every member learned from a peer's answer.
 *
 * <p>A member that answers is live (and its member list is merged in: that is the gossip). A live
 * member whose probe goes unanswered is suspected at once, so reads and writes stop waiting for
 * it; one that has not answered for {@code failureTimeout} leaves placement. Members learned only
 * by hearsay join after they answer a ping themselves, so a dead node cannot be resurrected by a
 * peer with stale news. The record a PING's sender claims for itself is hearsay too ({@link
 * #heardFrom}): any connection may claim any record, so a new node joins when it answers the next
 * round's ping at the address it claims, one ping interval after its first PING at most.
 *
 * <p>A seed counts as every address its host resolves to at the start of the round (see {@link
 * SeedAddresses}), so one DNS name of a Kubernetes headless service reaches every pod behind it.
 *
 * <p>An answer counts only when its first record, the responder, has the address that was dialled:
 * a node answering for another address can neither keep a dead member alive nor take its place.
 * Such an answer is logged once per address, and its responder becomes hearsay: a seed named
 * otherwise than its node names itself (a DNS name for an IP) still joins, through the address the
 * node gives, one round later.
 */
@ThreadSafe
final class FailureDetector {

    private static final Logger LOG = LoggerFactory.getLogger(FailureDetector.class);

    /** The most members held as hearsay at once; more claims wait until earlier ones answer or are forgotten. */
    static final int MAX_HEARSAY = 1024;

    private final RingNode node;
    private final LongSupplier nanoClock;
    private final SeedAddresses.Resolver resolver = InetAddress::getAllByName;
    /** When each member (by node id) last answered. */
    private final Map<String, Long> lastAnswerNanos = new ConcurrentHashMap<>();
    /** Members (by node id) that a peer's answer named but that have not answered themselves. */
    private final Map<String, Member> hearsay = new ConcurrentHashMap<>();
    /** Since when each address that is no member's (a seed, a hearsay member) has been silent. */
    private final Map<String, Long> silentAddresses = new ConcurrentHashMap<>();
    private final Map<String, Long> seedFailuresLogged = new ConcurrentHashMap<>();
    /** Addresses answered by a node claiming another address, with the claim and the members there: logged once each. */
    private final Map<String, String> foreignAnswersLogged = new ConcurrentHashMap<>();

    FailureDetector(RingNode node, LongSupplier nanoClock) {
        this.node = node;
        this.nanoClock = nanoClock;
    }

    /**
     * The sender of a PING claims to be {@code claimed}. Nothing is believed yet: the claim is
     * kept as hearsay, and the member joins (or moves to the claimed address) only once it answers
     * the next round's ping there itself. A claim that matches a live member's record, or this
     * node's own identity, changes nothing.
     */
    void heardFrom(Member claimed) {
        if (claimed.sameNode(node.self())
                || (node.membership().isLive(claimed) && claimed.equals(node.membership().current(claimed)))) {
            return;
        }
        rememberHearsay(claimed, true);
    }

    /**
     * Keeps {@code member} as hearsay unless the map is full; {@code replace}: a newer claim of
     * the same node (a PING from a node at its new address) replaces an older one.
     */
    private void rememberHearsay(Member member, boolean replace) {
        if (hearsay.size() >= MAX_HEARSAY && !hearsay.containsKey(member.nodeId())) {
            LOG.debug("[{}] not keeping hearsay of {}: {} members are already known only by hearsay", node.self().id(),
                    member, MAX_HEARSAY);
            return;
        }
        if (replace) {
            hearsay.put(member.nodeId(), member);
        } else {
            hearsay.putIfAbsent(member.nodeId(), member);
        }
    }

    /** Runs a round every {@code interval} on {@code thread}, until the thread stops. */
    void scheduleRounds(ScheduledExecutorService thread, Duration interval) {
        thread.scheduleWithFixedDelay(this::runRound, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
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
                // Resolved again every round: a DNS name (a headless service) stands for every address it has now.
                SeedAddresses.resolve(seed, resolver).forEach(targets::putIfAbsent);
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
        long sent = nanoClock.getAsLong();
        return node.peers().ping(socket, deadline).handle((members, error) -> {
            long now = nanoClock.getAsLong();
            if (error == null && !members.isEmpty() && !members.get(0).id().equals(address)) {
                onForeignAnswer(address, members.get(0), now);
            } else if (error == null && !members.isEmpty()) {
                Member responder = members.get(0);
                lastAnswerNanos.put(responder.nodeId(), now);
                // Every ping is a round trip the restore planner learns from, without a probe of its own.
                node.links().roundTrip(responder.id(), Duration.ofNanos(now - sent));
                hearsay.remove(responder.nodeId());
                node.membership().add(responder);
                for (Member other : node.membership().at(address)) {
                    if (!other.sameNode(responder)) {
                        onSilence(other, now, "node " + responder.nodeId() + " answers at its address now");
                    }
                }
                for (Member learned : members.subList(1, members.size())) {
                    if (!node.membership().isLive(learned) && !learned.sameNode(node.self())) {
                        rememberHearsay(learned, false);
                    }
                }
                silentAddresses.remove(address);
                seedFailuresLogged.remove(address);
                foreignAnswersLogged.remove(address);
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
     * The node answering at {@code address} says it is {@code responder}, at another address: the
     * answer does not count for any member at {@code address} (they are silent), and the
     * responder is only hearsay, believed once it answers at its own address. Logged once per
     * address while the claim and the members there stay the same: as a warning when the address
     * is a member's, else for information (a seed that names a node otherwise than the node names
     * itself, e.g. by DNS name and IP).
     */
    private void onForeignAnswer(String address, Member responder, long now) {
        List<Member> atAddress = node.membership().at(address);
        String situation = responder.id() + " for " + atAddress;
        if (!situation.equals(foreignAnswersLogged.put(address, situation))) {
            if (atAddress.isEmpty()) {
                LOG.info("[{}] ring peer {} answers as {}: it joins once it answers at that address itself (a ping "
                        + "answer counts only from the address dialled; sr3.ring.seeds may name the node otherwise "
                        + "than its sr3.ring.host)", node.self().id(), address, responder);
            } else {
                LOG.warn("[{}] the node answering at {}, the address of {}, says it is {}: ignoring its answer (a ping "
                        + "answer counts only from the member dialled)", node.self().id(), address, atAddress, responder);
            }
        }
        for (Member member : atAddress) {
            onSilence(member, now, "the node answering at its address says it is " + responder.id());
        }
        if (!node.membership().isLive(responder) && !responder.sameNode(node.self())) {
            rememberHearsay(responder, false);
        }
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
