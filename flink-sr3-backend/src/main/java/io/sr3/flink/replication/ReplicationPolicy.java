package io.sr3.flink.replication;

import javax.annotation.concurrent.ThreadSafe;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * Chooses each operator's copies from its failure cost, within the storage budget. Pure and
 * deterministic: the same costs, ring and settings give the same plan.
 *
 * <p><b>uniform</b>: every operator gets {@code uniformCopies}, capped at the ring size (the
 * behaviour without the policy).
 *
 * <p><b>cost-aware</b>: every operator starts at {@code minCopies}; then, one copy at a time, the
 * operator whose next copy has the highest value per byte gets it. The value of an operator's
 * next copy is {@code stalledSubtaskSeconds * LOSS_FACTOR^(copies - minCopies)}: each further copy
 * makes losing all copies at once about ten times less likely, so it protects a tenth of the cost
 * the previous one did. A copy costs the operator's {@code stateBytes}; it is given only while the
 * bytes-weighted mean copies stays within the budget and the operator stays at most at
 * {@code min(maxCopies, ringSize)}. An operator whose next copy does not fit keeps what it has,
 * and smaller ones may still get theirs. Operators whose input outpaces their capacity (unbounded
 * cost) rank first, fewest copies and then smallest state first. Ties go to the lower vertex id.
 *
 * <p>An operator without state in the latest checkpoint wrote no files, so its copies protect
 * nothing and cost nothing: it gets {@code minCopies}, which keeps the budget if state appears
 * before the next plan. Copies never exceed the ring size, even below {@code minCopies} (a ring
 * of one process keeps one copy). Each choice spans {@code min(copies, zones)} zones.
 */
@ThreadSafe
public final class ReplicationPolicy {

    /** How much less likely losing all copies at once becomes with one more copy. */
    public static final double LOSS_FACTOR = 0.1;

    private final ReplicationSettings settings;

    public ReplicationPolicy(ReplicationSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    /**
     * The plan for {@code costs} (one per stateful vertex) on a ring of {@code ringSize} nodes in
     * {@code zones} distinct zones.
     *
     * @throws IllegalArgumentException on duplicate vertices, {@code ringSize < 1} or zones outside 1..ringSize
     */
    public ReplicationPlan plan(List<OperatorCost> costs, int ringSize, int zones) {
        if (ringSize < 1 || zones < 1 || zones > ringSize) {
            throw new IllegalArgumentException(String.format(
                    "Need ringSize >= 1 and 1 <= zones <= ringSize, was ringSize %d, zones %d", ringSize, zones));
        }
        List<OperatorCost> ops = new ArrayList<>(costs);
        ops.sort(Comparator.comparing(c -> c.operator().vertexId()));
        HashSet<String> seen = new HashSet<>();
        ops.forEach(c -> {
            if (!seen.add(c.operator().vertexId())) {
                throw new IllegalArgumentException("Two costs for vertex " + c.operator().vertexId());
            }
        });
        String ringLimit = "ring has only " + ringSize + (ringSize == 1 ? " node" : " nodes");
        if (settings.mode() == ReplicationMode.UNIFORM) {
            int copies = Math.min(settings.uniformCopies(), ringSize);
            String reason = copies < settings.uniformCopies() ? "uniform; " + ringLimit : "uniform";
            List<ReplicaChoice> choices = new ArrayList<>();
            ops.forEach(c -> choices.add(choice(c, copies, zones, reason)));
            return ReplicationPlan.of(copies, choices);
        }
        return costAware(ops, ringSize, zones, ringLimit);
    }

    private ReplicationPlan costAware(List<OperatorCost> ops, int ringSize, int zones, String ringLimit) {
        int floor = Math.min(settings.minCopies(), ringSize);
        int cap = Math.min(settings.maxCopies(), ringSize);
        String capLimit = cap < settings.maxCopies() ? ringLimit : "at max-copies";
        int n = ops.size();
        int[] copies = new int[n];
        String[] why = new String[n];
        List<Integer> stateful = new ArrayList<>();
        BigInteger bytes = BigInteger.ZERO;
        for (int i = 0; i < n; i++) {
            copies[i] = floor;
            long state = ops.get(i).operator().stateBytes();
            if (state == 0) {
                why[i] = "no state in the latest checkpoint" + (floor < settings.minCopies() ? "; " + ringLimit : "");
            } else {
                stateful.add(i);
                bytes = bytes.add(BigInteger.valueOf(state));
            }
        }
        BigInteger spent = bytes.multiply(BigInteger.valueOf(floor));
        Comparator<Integer> nextCopyFirst = (a, b) -> compareNextCopy(ops.get(a), copies[a] - floor,
                ops.get(b), copies[b] - floor);
        List<Integer> ranked = new ArrayList<>(stateful);
        ranked.sort(nextCopyFirst); // ranked by the value of their first extra copy, for the reasons
        List<Integer> open = new ArrayList<>(stateful);
        while (!open.isEmpty()) {
            int best = open.get(0);
            for (int i : open) {
                if (nextCopyFirst.compare(i, best) < 0) {
                    best = i;
                }
            }
            BigInteger more = spent.add(BigInteger.valueOf(ops.get(best).operator().stateBytes()));
            if (copies[best] >= cap) {
                why[best] = capLimit;
            } else if (ReplicationPlan.mean(more, bytes) > settings.budget()) {
                why[best] = "budget exhausted";
            } else {
                copies[best]++;
                spent = more;
                continue;
            }
            open.remove(Integer.valueOf(best)); // the budget left only shrinks, so it never fits later
        }
        List<ReplicaChoice> choices = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int rank = ranked.indexOf(i);
            String reason = rank < 0 ? why[i] : rankPhrase(ops.get(i), rank, ranked.size()) + "; " + why[i];
            choices.add(choice(ops.get(i), copies[i], zones, reason));
        }
        return ReplicationPlan.of(Math.min(settings.uniformCopies(), ringSize), choices);
    }

    /** Negative when {@code a}'s next copy (after {@code aExtra} extra ones) goes before {@code b}'s. */
    static int compareNextCopy(OperatorCost a, int aExtra, OperatorCost b, int bExtra) {
        int order;
        if (a.isUnbounded() || b.isUnbounded()) {
            order = Boolean.compare(b.isUnbounded(), a.isUnbounded());
            if (order == 0) {
                order = Integer.compare(aExtra, bExtra);
            }
            if (order == 0) {
                order = Long.compare(a.operator().stateBytes(), b.operator().stateBytes());
            }
        } else {
            order = Double.compare(valuePerByte(b, bExtra), valuePerByte(a, aExtra));
        }
        return order != 0 ? order : a.operator().vertexId().compareTo(b.operator().vertexId());
    }

    /** What the next copy of an operator with {@code extra} copies above the minimum protects, per byte it costs. */
    static double valuePerByte(OperatorCost c, int extra) {
        return c.stalledSubtaskSeconds() * Math.pow(LOSS_FACTOR, extra) / c.operator().stateBytes();
    }

    private static String rankPhrase(OperatorCost c, int rank, int of) {
        if (c.isUnbounded()) {
            return "unbounded failure cost (input outpaces capacity)";
        }
        return rank == 0 ? "highest failure cost per byte"
                : "failure cost per byte ranked " + (rank + 1) + " of " + of;
    }

    private static ReplicaChoice choice(OperatorCost c, int copies, int zones, String reason) {
        return new ReplicaChoice(c.operator().vertexId(), c.operator().name(), copies, Math.min(copies, zones), c,
                reason);
    }
}
