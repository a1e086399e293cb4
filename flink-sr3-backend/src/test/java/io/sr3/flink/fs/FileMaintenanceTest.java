package io.sr3.flink.fs;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingRole;
import io.sr3.flink.node.TestingRing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Repair and the orphan sweep run on every storage node from its start, before any file-system call. */
class FileMaintenanceTest {

    @TempDir Path store;

    @Test
    void aStartedStorageNodeRunsRepairAndTheSweepWithoutAFileSystemCall() throws Exception {
        try (RingNode node = RingNode.start(TestingRing.testConfig().withPortAndStore(0, store))) {
            assertThat(node.stats()).containsKeys("auditUnderReplicatedBlocks", "lostBlocks");
            assertThat(node.scheduleMaintenance(ReplicaRepairer.TASK_NAME, () -> () -> { }, Duration.ofHours(1)))
                    .as("repair is scheduled already").isFalse();
            assertThat(node.scheduleMaintenance(OrphanSweeper.TASK_NAME, () -> () -> { }, Duration.ofHours(1)))
                    .as("the sweep is scheduled already").isFalse();
        }
    }

    @Test
    void aClientNodeStoresNothingAndRunsNeither() throws Exception {
        NodeConfig client = TestingRing.testConfig().withPortAndStore(0, store).withRole(RingRole.CLIENT);
        try (RingNode node = RingNode.start(client)) {
            assertThat(node.stats()).doesNotContainKey("auditUnderReplicatedBlocks");
            assertThat(node.scheduleMaintenance(ReplicaRepairer.TASK_NAME, () -> () -> { }, Duration.ofHours(1)))
                    .isTrue();
        }
    }
}
