package io.sr3.flink.node;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@link RingNode#start} runs besides the server: extensions, the scrubber, and nothing once closed. */
class RingNodeStartTest {

    @TempDir Path store;

    @Test
    void everyExtensionStartsOnceWithTheNodeAfterItJoinedAndMaySchedulePerNode() throws Exception {
        List<String> calls = new ArrayList<>();
        NodeExtension recording = node -> {
            calls.add(node.self().id() + " running=" + node.isRunning() + " registered="
                    + LocalRing.nodes().contains(node));
            assertThat(node.scheduleMaintenance("test-task", () -> () -> { }, Duration.ofHours(1))).isTrue();
        };
        AtomicLong fakeNanos = new AtomicLong(42);
        NodeConfig config = TestingRing.testConfig().withPortAndStore(0, store);
        try (RingNode node = RingNode.start(config, NodeThreads.create(), fakeNanos::get, List.of(recording))) {
            assertThat(calls).containsExactly(node.self().id() + " running=true registered=true");
            assertThat(node.scheduleMaintenance("test-task", () -> () -> { }, Duration.ofHours(1)))
                    .as("once per name").isFalse();
            assertThat(node.scheduleMaintenance(BlockScrubber.TASK_NAME, () -> () -> { }, Duration.ofHours(1)))
                    .as("a storage node scrubs from its start").isFalse();
            node.close();
            assertThat(node.scheduleMaintenance("after-close", () -> () -> { }, Duration.ofHours(1))).isFalse();
        }
    }

    @Test
    void aClientNodeDoesNotScrub() throws Exception {
        NodeConfig config = TestingRing.testConfig().withPortAndStore(0, store).withRole(RingRole.CLIENT);
        try (RingNode client = RingNode.start(config, NodeThreads.create(), System::nanoTime, List.of())) {
            assertThat(client.scheduleMaintenance(BlockScrubber.TASK_NAME, () -> () -> { }, Duration.ofHours(1)))
                    .isTrue();
        }
    }

    @Test
    void anAttachmentIsMadeOncePerNode() throws Exception {
        NodeConfig config = TestingRing.testConfig().withPortAndStore(0, store);
        try (RingNode node = RingNode.start(config, NodeThreads.create(), System::nanoTime, List.of())) {
            StringBuilder first = node.attachment(StringBuilder.class, n -> new StringBuilder(n.self().id()));
            assertThat(node.attachment(StringBuilder.class, n -> new StringBuilder("other"))).isSameAs(first);
            assertThat(first.toString()).isEqualTo(node.self().id());
        }
    }
}
