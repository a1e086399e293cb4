package io.sr3.flink.ring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The live members of the ring as one node sees them, and the placement snapshot built from them.
 *
 * <p>Joins and removals are logged once each, with the member and the new ring size. Readers get
 * an immutable {@link ConsistentHash} and never see a half-applied change.
 */
@ThreadSafe
public final class Membership {

    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);

    @Nullable private final Member self;
    private final Object lock = new Object();

    @GuardedBy("lock")
    private final Map<String, Member> live = new LinkedHashMap<>();

    private volatile ConsistentHash ring;

    /**
     * @param self this node, always a member while it runs; null for a client that stores nothing
     */
    public Membership(@Nullable Member self, int virtualNodes) {
        this.self = self;
        if (self != null) {
            live.put(self.id(), self);
        }
        this.ring = ConsistentHash.of(live.values(), virtualNodes);
    }

    @Nullable
    public Member self() {
        return self;
    }

    /** The current placement snapshot. */
    public ConsistentHash ring() {
        return ring;
    }

    public List<Member> members() {
        return ring.members();
    }

    public boolean isLive(Member member) {
        synchronized (lock) {
            return live.containsKey(member.id());
        }
    }

    /** Adds a member that answered; returns true if it was not live before. */
    public boolean add(Member member) {
        synchronized (lock) {
            Member previous = live.put(member.id(), member);
            if (member.equals(previous)) {
                return false;
            }
            ring = ring.withMembers(live.values());
            if (previous == null) {
                LOG.info("[{}] ring member joined: {} (ring size {})", selfName(), member, live.size());
            }
            return previous == null;
        }
    }

    /** Removes a member that stopped answering; returns true if it was live. */
    public boolean remove(Member member, String why) {
        synchronized (lock) {
            if (self != null && self.sameNode(member)) {
                return false;
            }
            if (live.remove(member.id()) == null) {
                return false;
            }
            ring = ring.withMembers(live.values());
            LOG.warn("[{}] ring member removed: {} ({}); ring size {}", selfName(), member, why, live.size());
            return true;
        }
    }

    private String selfName() {
        return self == null ? "client" : self.id();
    }
}
