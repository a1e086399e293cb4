package io.sr3.flink.fs;

import io.sr3.flink.node.NodeExtension;
import io.sr3.flink.node.RingNode;

/**
 * The upkeep of the files on a storage node, from its start: replica repair (with its audit
 * counters in the node's stats) and the orphan sweep. Client nodes store nothing and run neither.
 */
public final class FileMaintenance implements NodeExtension {

    @Override
    public void started(RingNode node) {
        if (node.isClient()) {
            return;
        }
        node.scheduleMaintenance(ReplicaRepairer.TASK_NAME, () -> {
            ReplicaRepairer repairer = new ReplicaRepairer(node);
            node.registerStat("auditUnderReplicatedBlocks", () -> repairer.audit()[0]);
            node.registerStat("auditBlocksInOneZone", () -> repairer.audit()[1]);
            node.reportRepairPendingFrom(repairer::pending);
            node.registerStat("corruptBlocksFound", node.metrics().corruptBlocksFound::get);
            node.registerStat("blocksScrubbed", node.metrics().blocksScrubbed::get);
            node.registerStat("bytesScrubbed", node.metrics().bytesScrubbed::get);
            node.registerStat("missingReplicasFound", node.metrics().missingReplicasFound::get);
            node.registerStat("lostBlocks", node.metrics().lostBlocks::get);
            return repairer;
        }, node.config().repairInterval());
        node.scheduleMaintenance(OrphanSweeper.TASK_NAME,
                () -> new OrphanSweeper(node, System::currentTimeMillis, System::nanoTime),
                node.config().orphanGracePeriod());
    }
}
