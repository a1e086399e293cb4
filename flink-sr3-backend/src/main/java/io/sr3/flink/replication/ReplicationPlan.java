package io.sr3.flink.replication;

import javax.annotation.concurrent.Immutable;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * An immutable snapshot of the copies each operator's new checkpoint files get, as the JobManager
 * computed it and the TaskManagers look it up. A vertex the plan does not name gets
 * {@link #defaultCopies()}, the uniform replication factor.
 *
 * <p>Invariants: at most one choice per vertex, sorted by vertex id; equal plans encode to equal
 * bytes ({@link PlanCodec} draws the layout).
 */
@Immutable
public final class ReplicationPlan {

    private final int defaultCopies;
    private final List<ReplicaChoice> choices;
    private final Map<String, ReplicaChoice> byVertex;

    private ReplicationPlan(int defaultCopies, List<ReplicaChoice> choices) {
        if (defaultCopies < 1 || defaultCopies > ReplicationSettings.MOST_COPIES) {
            throw new IllegalArgumentException(String.format("defaultCopies must be between 1 and %d, was %d",
                    ReplicationSettings.MOST_COPIES, defaultCopies));
        }
        Map<String, ReplicaChoice> map = new TreeMap<>();
        for (ReplicaChoice c : choices) {
            if (map.put(c.vertexId(), c) != null) {
                throw new IllegalArgumentException("Two choices for vertex " + c.vertexId());
            }
        }
        this.defaultCopies = defaultCopies;
        this.byVertex = map;
        this.choices = List.copyOf(map.values());
    }

    /** A plan with choices for some vertices; the others get {@code defaultCopies}. */
    public static ReplicationPlan of(int defaultCopies, List<ReplicaChoice> choices) {
        return new ReplicationPlan(defaultCopies, choices);
    }

    /** The plan without choices: every file gets {@code copies}, as without the policy. */
    public static ReplicationPlan uniform(int copies) {
        return new ReplicationPlan(copies, List.of());
    }

    /** The copies the plan gives {@code vertexId}'s files; empty when it names no such vertex (use the default). */
    public OptionalInt copiesFor(String vertexId) {
        ReplicaChoice choice = byVertex.get(vertexId);
        return choice == null ? OptionalInt.empty() : OptionalInt.of(choice.copies());
    }

    /** The copies of files whose vertex the plan does not name. */
    public int defaultCopies() {
        return defaultCopies;
    }

    /** Every choice, sorted by vertex id. */
    public List<ReplicaChoice> choices() {
        return choices;
    }

    /**
     * The mean copies over the choices' checkpoint bytes; the plain mean of their copies when none
     * has state, {@link #defaultCopies()} when there are no choices. The policy's budget check uses
     * the same arithmetic, so a plan within its budget never reports a mean above it.
     */
    public double meanCopies() {
        if (choices.isEmpty()) {
            return defaultCopies;
        }
        BigInteger spent = BigInteger.ZERO;
        BigInteger bytes = BigInteger.ZERO;
        long copies = 0;
        for (ReplicaChoice c : choices) {
            spent = spent.add(BigInteger.valueOf(c.stateBytes()).multiply(BigInteger.valueOf(c.copies())));
            bytes = bytes.add(BigInteger.valueOf(c.stateBytes()));
            copies += c.copies();
        }
        return bytes.signum() == 0 ? (double) copies / choices.size() : mean(spent, bytes);
    }

    /** Bytes-weighted mean copies: {@code spent} copy-bytes over {@code bytes} (> 0) state bytes. */
    static double mean(BigInteger spent, BigInteger bytes) {
        return spent.doubleValue() / bytes.doubleValue();
    }

    /** The plan in the versioned binary layout of {@link PlanCodec}. */
    public byte[] encode() {
        return PlanCodec.encode(this);
    }

    /**
     * Reads a plan written by {@link #encode()}.
     *
     * @throws IOException when the bytes are truncated, carry another magic or an unknown version,
     *     or hold anything a plan cannot; the message names the field and the byte offset
     */
    public static ReplicationPlan decode(byte[] bytes) throws IOException {
        return PlanCodec.decode(bytes);
    }

    /**
     * One log line for {@code c}: the operator, its failure cost with its parts, its state size,
     * the copies and zones chosen and why.
     */
    public String logLine(ReplicaChoice c) {
        OperatorCost cost = c.cost();
        return String.format(Locale.ROOT, "Replication of operator '%s' (vertex %s): failure cost %s "
                        + "(restore %s, replay %s, failover region %d subtasks), state %s, %d %s in %d %s: %s",
                c.name(), c.vertexId(), cost.isUnbounded() ? "unbounded (input outpaces capacity)"
                        : seconds(cost.stalledSubtaskSeconds(), " stalled subtask-s"),
                seconds(cost.restoreSeconds(), " s"), seconds(cost.replaySeconds(), " s"),
                cost.operator().failoverRegionSubtasks(), bytes(c.stateBytes()), c.copies(),
                c.copies() == 1 ? "copy" : "copies", c.zones(), c.zones() == 1 ? "zone" : "zones", c.reason());
    }

    /** The log line of every choice, sorted by vertex id. */
    public List<String> logLines() {
        List<String> lines = new ArrayList<>(choices.size());
        choices.forEach(c -> lines.add(logLine(c)));
        return lines;
    }

    private static String seconds(double s, String unit) {
        return Double.isInfinite(s) ? "unbounded" : String.format(Locale.ROOT, s < 10 ? "%.2f%s" : "%.1f%s", s, unit);
    }

    private static String bytes(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = n;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReplicationPlan p && p.defaultCopies == defaultCopies && p.choices.equals(choices);
    }

    @Override
    public int hashCode() {
        return 31 * defaultCopies + choices.hashCode();
    }

    @Override
    public String toString() {
        return "ReplicationPlan{default " + defaultCopies + ", mean " + String.format(Locale.ROOT, "%.3f", meanCopies())
                + ", " + choices.size() + " choices}";
    }
}
