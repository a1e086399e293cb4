package io.sr3.flink.ring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The members of the ring as one node sees them, and the placement snapshot built from them.
 *
 * <p>A member is in one of three states here: <em>live</em> (answering), <em>suspected</em> (its
 * last probe went unanswered: still a member of placement, but reads and writes skip it while
 * others can serve), or <em>departed</em> (silent past the failure detector's timeout: out of
 * placement, remembered with the time it left so that cleanup and repair can treat it as "may come
 * back"). Joins, suspicions and removals are logged once each. Readers get an immutable
 * {@link ConsistentHash} and never see a half-applied change.
 */
@ThreadSafe
public final class Membership {

    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);

    /** Longer than any window callers ask about ({@link #departedWithin}); bounds the memory of departures. */
    private static final Duration FORGET_DEPARTED_AFTER = Duration.ofDays(2);

    @Nullable private final Member self;
    private final LongSupplier nanoClock;
    private final Object lock = new Object();

    @GuardedBy("lock")
    private final Map<String, Member> live = new LinkedHashMap<>();

    @GuardedBy("lock")
    private final Set<String> suspected = new LinkedHashSet<>();

    /** Removed members by node id, with the {@link #nanoClock} time of their removal. */
    @GuardedBy("lock")
    private final Map<String, Departure> departed = new LinkedHashMap<>();

    private volatile ConsistentHash ring;

    /** A member that left placement, and when. */
    public record Departure(Member member, long removedAtNanos) {}

    /**
     * @param self this node, always a member while it runs; null for a client that stores nothing
     */
    public Membership(@Nullable Member self, int virtualNodes) {
        this(self, virtualNodes, System::nanoTime);
    }

    public Membership(@Nullable Member self, int virtualNodes, LongSupplier nanoClock) {
        this.self = self;
        this.nanoClock = nanoClock;
        if (self != null) {
            live.put(self.nodeId(), self);
        }
        this.ring = ConsistentHash.of(live.values(), virtualNodes);
    }

    @Nullable
    public Member self() {
        return self;
    }

    /** The current placement snapshot (suspected members included). */
    public ConsistentHash ring() {
        return ring;
    }

    public List<Member> members() {
        return ring.members();
    }

    public boolean isLive(Member member) {
        synchronized (lock) {
            return live.containsKey(member.nodeId());
        }
    }

    /**
     * The live record of the node {@code member} names, with its current address; {@code member}
     * itself when the node is not live. Manifests record holders as they were when written: a
     * holder that restarted on a new address is reached through this.
     */
    public Member current(Member member) {
        synchronized (lock) {
            Member record = live.get(member.nodeId());
            return record != null ? record : member;
        }
    }

    /** The live members listening on {@code hostPort}: normally one, two while a restarted node replaces its old record. */
    public List<Member> at(String hostPort) {
        synchronized (lock) {
            List<Member> found = new ArrayList<>(1);
            for (Member m : live.values()) {
                if (m.id().equals(hostPort)) {
                    found.add(m);
                }
            }
            return found;
        }
    }

    /** Whether a member's last probe went unanswered; false for members that are not live. */
    public boolean isSuspected(Member member) {
        synchronized (lock) {
            return suspected.contains(member.nodeId());
        }
    }

    /** Node ids of the suspected members. */
    public Set<String> suspected() {
        synchronized (lock) {
            return Set.copyOf(suspected);
        }
    }

    /** Adds a member that answered (and ends any suspicion of it); returns true if it was not live before. */
    public boolean add(Member member) {
        synchronized (lock) {
            boolean wasSuspected = suspected.remove(member.nodeId());
            Departure departure = departed.remove(member.nodeId());
            Member previous = live.put(member.nodeId(), member);
            if (wasSuspected && previous != null) {
                LOG.info("[{}] ring member {} answers again; no longer suspected", selfName(), member);
            }
            if (member.equals(previous)) {
                return false;
            }
            ring = ring.withMembers(live.values());
            if (previous == null && departure != null) {
                LOG.info("[{}] ring member rejoined with its store: {} (was {}; ring size {})", selfName(), member,
                        departure.member().id(), live.size());
            } else if (previous == null) {
                LOG.info("[{}] ring member joined: {} (ring size {})", selfName(), member, live.size());
            } else if (!previous.id().equals(member.id())) {
                LOG.info("[{}] ring member {} moved from {} to {}", selfName(), member.nodeId(), previous.id(), member.id());
            }
            return previous == null;
        }
    }

    /** Marks a live member whose probe went unanswered; returns true if it was not suspected before. */
    public boolean suspect(Member member, String why) {
        synchronized (lock) {
            if ((self != null && self.sameNode(member)) || !live.containsKey(member.nodeId())) {
                return false;
            }
            if (!suspected.add(member.nodeId())) {
                return false;
            }
            LOG.info("[{}] ring member {} suspected ({}); reads and writes skip it until it answers", selfName(), member,
                    why);
            return true;
        }
    }

    /** Removes a member that stopped answering; returns true if it was live. */
    public boolean remove(Member member, String why) {
        synchronized (lock) {
            if (self != null && self.sameNode(member)) {
                return false;
            }
            Member removed = live.remove(member.nodeId());
            if (removed == null) {
                return false;
            }
            suspected.remove(member.nodeId());
            forgetOldDepartures();
            departed.put(member.nodeId(), new Departure(removed, nanoClock.getAsLong()));
            ring = ring.withMembers(live.values());
            LOG.warn("[{}] ring member removed: {} ({}); ring size {}", selfName(), member, why, live.size());
            return true;
        }
    }

    /**
     * Members removed within the last {@code window}, oldest first. A departed member may still
     * come back with its disk: until then, what only it holds is unreachable, not gone.
     */
    public List<Departure> departedWithin(Duration window) {
        long cutoff = nanoClock.getAsLong() - window.toNanos();
        synchronized (lock) {
            List<Departure> recent = new ArrayList<>(departed.size());
            for (Departure departure : departed.values()) {
                if (departure.removedAtNanos() - cutoff >= 0) {
                    recent.add(departure);
                }
            }
            return recent;
        }
    }

    @GuardedBy("lock")
    private void forgetOldDepartures() {
        long cutoff = nanoClock.getAsLong() - FORGET_DEPARTED_AFTER.toNanos();
        for (Iterator<Departure> it = departed.values().iterator(); it.hasNext(); ) {
            if (it.next().removedAtNanos() - cutoff < 0) {
                it.remove();
            }
        }
    }

    private String selfName() {
        return self == null ? "client" : self.id();
    }
}
