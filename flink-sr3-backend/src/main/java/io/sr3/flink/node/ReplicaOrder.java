package io.sr3.flink.node;

import io.sr3.flink.ring.Member;

import javax.annotation.concurrent.ThreadSafe;

import java.util.ArrayList;
import java.util.List;

/**
 * The order in which {@link RingStorage} tries the nodes for one key: suspected members last, and
 * for a read of a blob with recorded holders this node first (local recovery is free), then the
 * live holders, then the rest of the ring, then holders that left.
 */
@ThreadSafe
final class ReplicaOrder {

    private final RingNode node;

    ReplicaOrder(RingNode node) {
        this.node = node;
    }

    /** The members in the given order, suspected ones moved to the end. */
    List<Member> suspectedLast(List<Member> members) {
        List<Member> ordered = new ArrayList<>(members.size());
        List<Member> suspects = new ArrayList<>();
        for (Member m : members) {
            (node.membership().isSuspected(m) ? suspects : ordered).add(m);
        }
        ordered.addAll(suspects);
        return ordered;
    }

    /** Reads of one blob, by a holder or any node, as tried by {@link RingStorage#readVerified}. */
    List<Member> forRead(String key, List<Member> holders) {
        List<Member> order = new ArrayList<>();
        Member self = node.self();
        for (Member h : holders) {
            if (h.sameNode(self)) {
                order.add(self);
            }
        }
        for (Member h : holders) {
            if (!h.isIn(order) && node.membership().isLive(h) && !node.membership().isSuspected(h)) {
                order.add(h);
            }
        }
        for (Member m : suspectedLast(node.membership().ring().successors(key))) {
            if (!m.isIn(order)) {
                order.add(m);
            }
        }
        // Holders that left the ring are tried last: a node may be back before the detector noticed.
        for (Member h : holders) {
            if (!h.isIn(order)) {
                order.add(h);
            }
        }
        return order;
    }
}
