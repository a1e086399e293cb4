package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.restore.RestoreReport;
import io.sr3.flink.restore.RestoreStats;
import io.sr3.flink.node.Structure;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

import javax.annotation.Nullable;

import java.util.List;
import java.util.Locale;
import java.util.function.ToLongFunction;

/**
 * Exposes this process's ring node as Flink metrics under an {@code sr3} group of every keyed
 * operator (the ring is per process, so all operators of one TaskManager show the same values).
 *
 * <p>Gauges read the node that is running when they are sampled and never start one: a process
 * without a ring node reports -1. The {@code sr3.pacing} gauges only for a job that paces.
 */
final class RingMetrics {

    private RingMetrics() {}

    static void register(MetricGroup operatorGroup, String jobId, boolean paced) {
        register(operatorGroup, jobId, paced, null);
    }

    /** @param copies the operator's replication plan with cost-aware replication, else null (no such gauges) */
    static void register(MetricGroup operatorGroup, String jobId, boolean paced, @Nullable PlannedCopies copies) {
        MetricGroup group = operatorGroup.addGroup("sr3");
        if (paced) {
            PacerMetrics.register(group, jobId);
        }
        if (copies != null) {
            registerReplication(group.addGroup("replication"), copies);
        }
        gauge(group, "ringSize", node -> node.membership().members().size());
        gauge(group, "bytesStored", node -> node.store().bytesStored());
        gauge(group, "bytesWritten", node -> node.metrics().bytesWritten.get());
        gauge(group, "bytesRead", node -> node.metrics().bytesRead.get());
        gauge(group, "bytesReadRemote", node -> node.metrics().bytesReadRemote.get());
        gauge(group, "replicaFallbacks", node -> node.metrics().replicaFallbacks.get());
        gauge(group, "underReplicatedWrites", node -> node.metrics().underReplicatedWrites.get());
        gauge(group, "failedWrites", node -> node.metrics().failedWrites.get());
        gauge(group, "suspectedMembers", node -> node.membership().suspected().size());
        gauge(group, "corruptManifests", node -> node.metrics().corruptManifests.get());
        gauge(group, "underReplicatedBlocks", node -> node.metrics().underReplicatedBlocks.get());
        gauge(group, "blocksReReplicated", node -> node.metrics().blocksReReplicated.get());
        gauge(group, "bytesReReplicated", node -> node.metrics().bytesReReplicated.get());
        gauge(group, "orphanBlocksSwept", node -> node.metrics().orphanBlocksSwept.get());
        gauge(group, "orphanBytesSwept", node -> node.metrics().orphanBytesSwept.get());
        gauge(group, "corruptBlocksFound", node -> node.metrics().corruptBlocksFound.get());
        gauge(group, "missingReplicasFound", node -> node.metrics().missingReplicasFound.get());
        gauge(group, "lostBlocks", node -> node.metrics().lostBlocks.get());
        registerRestore(group.addGroup("restore"));
    }

    /**
     * The operator's entry in its job's replication plan: copies and zones its new files get, and
     * the failure cost that earned them (stalled subtask-seconds); -1 until a plan names it.
     */
    private static void registerReplication(MetricGroup group, PlannedCopies copies) {
        group.gauge("copies", (Gauge<Long>) () -> copies.choice().map(c -> (long) c.copies()).orElse(-1L));
        group.gauge("zones", (Gauge<Long>) () -> copies.choice().map(c -> (long) c.zones()).orElse(-1L));
        group.gauge("failureCostSeconds", (Gauge<Long>) () -> copies.choice()
                .map(c -> Double.isFinite(c.cost().stalledSubtaskSeconds()) ? Math.round(c.cost().stalledSubtaskSeconds())
                        : Long.MAX_VALUE)
                .orElse(-1L));
    }

    /** The restores of this process: how many per structure, the latest one, and how well they were predicted. */
    private static void registerRestore(MetricGroup group) {
        for (Structure structure : Structure.values()) {
            gauge(group, structure.name().toLowerCase(Locale.ROOT), node -> RestoreStats.of(node).restores(structure));
        }
        gauge(group, "refetchedBlocks", node -> RestoreStats.of(node).refetchedBlocks());
        gauge(group, "replans", node -> RestoreStats.of(node).replans());
        gauge(group, "lastBytes", node -> last(node, r -> r.bytes()));
        gauge(group, "lastPredictedMillis", node -> last(node, r -> Math.round(r.predicted() * 1000)));
        gauge(group, "lastActualMillis", node -> last(node, r -> Math.round(r.actualSeconds() * 1000)));
        gauge(group, "medianPredictionErrorPercent", node -> {
            double error = RestoreStats.of(node).medianPredictionError();
            return Double.isNaN(error) ? -1 : Math.round(error * 100);
        });
    }

    private static long last(RingNode node, ToLongFunction<RestoreReport> value) {
        RestoreReport report = RestoreStats.of(node).last();
        return report == null ? -1 : value.applyAsLong(report);
    }

    private static void gauge(MetricGroup group, String name, ToLongFunction<RingNode> value) {
        group.gauge(name, (Gauge<Long>) () -> {
            List<RingNode> nodes = LocalRing.nodes();
            for (RingNode node : nodes) {
                if (node.isRunning()) {
                    return value.applyAsLong(node);
                }
            }
            return -1L;
        });
    }
}
