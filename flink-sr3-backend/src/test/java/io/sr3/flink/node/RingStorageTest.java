package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import io.sr3.flink.testing.Deadline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Replication and replica fallback on three real nodes over loopback. */
class RingStorageTest {

    @TempDir Path root;

    private TestingRing ring;

    @AfterEach
    void stop() {
        if (ring != null) {
            ring.close();
        }
    }

    private static int crc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
    }

    @Test
    void writesReplicationFactorCopiesWriterFirst() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
        RingNode writer = ring.node(1);
        List<Member> holders = writer.storage().writeAndWait("b-x-0", new byte[] {1, 2, 3}, true);
        assertThat(holders).hasSize(2);
        assertThat(holders).contains(writer.self());
        long copies = ring.nodes().stream().filter(n -> n.store().contains("b-x-0")).count();
        assertThat(copies).isEqualTo(2);
    }

    @Test
    void corruptReplicaIsSkippedAndNeverReturned() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
        RingNode writer = ring.node(0);
        byte[] data = "checkpoint bytes".getBytes();
        List<Member> holders = writer.storage().writeAndWait("b-c-0", data, true);
        // Damage the writer's own copy: the read must come from the other replica.
        try (RandomAccessFile file = new RandomAccessFile(writer.store().directory().resolve("b-c-0").toFile(), "rw")) {
            file.seek(file.length() - 1);
            file.write('X');
        }
        byte[] read = writer.storage().readVerified("b-c-0", data.length, crc(data), holders, "block 0 of test file");
        assertThat(read).isEqualTo(data);
        assertThat(writer.metrics().replicaFallbacks.get()).isEqualTo(1);
        assertThat(writer.metrics().bytesReadRemote.get()).isEqualTo(data.length);
    }

    /**
     * A delete that waits on one of the node's network threads would wait for an answer only that
     * thread can read (a checkpoint stream discarded while its last block was in flight hung a
     * TaskManager's ring traffic this way): it fails at once and names the thread, and the
     * asynchronous delete works from there.
     */
    @Test
    void blockingOnANetworkThreadFailsFastAndTheAsyncDeleteWorksThere() throws Exception {
        ring = TestingRing.start(2, TestingRing.testConfig(), root);
        RingNode writer = ring.node(0);
        List<Member> holders = writer.storage().writeAndWait("b-n-0", new byte[] {4, 2}, true);

        assertThatThrownBy(() -> writer.runOnNetworkThread(() -> writer.storage().deleteOn("b-n-0", holders))
                .get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("would block the ring's network thread sr3-netty");
        assertThatThrownBy(() -> writer.runOnNetworkThread(() -> {
            try {
                writer.storage().writeAndWait("b-n-1", new byte[] {1}, true);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).get(10, TimeUnit.SECONDS)).cause().hasMessageContaining("writing b-n-1 would block");

        CompletableFuture<CompletableFuture<Void>> started = new CompletableFuture<>();
        writer.runOnNetworkThread(() -> started.complete(writer.storage().deleteOnAsync("b-n-0", holders)))
                .get(10, TimeUnit.SECONDS);
        started.get().get(10, TimeUnit.SECONDS);
        assertThat(ring.nodes().stream().filter(n -> n.store().contains("b-n-0")).count()).isZero();
    }

    @Test
    void deadHolderIsSkipped() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
        byte[] data = new byte[5000];
        List<Member> holders = ring.node(0).storage().writeAndWait("b-d-0", data, false);
        RingNode reader = ring.nodes().stream().filter(n -> !holders.contains(n.self())).findFirst().orElseThrow();
        RingNode victim = ring.nodes().stream().filter(n -> n.self().equals(holders.get(0))).findFirst().orElseThrow();
        victim.close();
        assertThat(reader.storage().readVerified("b-d-0", data.length, crc(data), holders, "block 0 of f")).isEqualTo(data);
    }

    @Test
    void losingEveryReplicaNamesTheBlockAndTheFile() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
        byte[] data = new byte[100];
        List<Member> holders = ring.node(0).storage().writeAndWait("b-l-0", data, true);
        RingNode survivor = ring.nodes().stream().filter(n -> !holders.contains(n.self())).findFirst().orElseThrow();
        ring.nodes().stream().filter(n -> holders.contains(n.self())).forEach(RingNode::close);
        assertThatThrownBy(() -> survivor.storage().readVerified("b-l-0", data.length, crc(data), holders,
                        "block 0 of 1 of sr3:///chk-1/state"))
                .isInstanceOf(BlockUnavailableException.class)
                .hasMessageContaining("sr3:///chk-1/state")
                .hasMessageContaining("b-l-0")
                .hasMessageContaining(holders.get(0).id());
    }

    @Test
    void writeToDeadNodeGoesToTheNextNode() throws Exception {
        ring = TestingRing.start(4, TestingRing.testConfig(), root);
        RingNode writer = ring.node(0);
        List<Member> planned = writer.membership().ring().placement("b-w-0", writer.self(), 2);
        RingNode planned2 = ring.nodes().stream().filter(n -> n.self().equals(planned.get(1))).findFirst().orElseThrow();
        planned2.close(); // still a member until the failure detector notices
        List<Member> holders = writer.storage().writeAndWait("b-w-0", new byte[10], true);
        assertThat(holders).hasSize(2).doesNotContain(planned2.self()).contains(writer.self());
        assertThat(writer.metrics().underReplicatedWrites.get()).isZero();
    }

    @Test
    void theWritersArrayIsReleasedOnlyWhenEveryCopyWasAcknowledged() throws Exception {
        ring = TestingRing.start(4, TestingRing.testConfig(), root);
        RingNode writer = ring.node(0);
        byte[] data = new byte[10];
        java.util.concurrent.atomic.AtomicInteger released = new java.util.concurrent.atomic.AtomicInteger();
        writer.storage().write("b-r-0", ByteBuffer.wrap(data), crc(data), true, 2, released::incrementAndGet).get(30, TimeUnit.SECONDS);
        assertThat(released).as("both copies acknowledged").hasValue(1);

        List<Member> planned = writer.membership().ring().placement("b-r-1", writer.self(), 2);
        RingNode planned2 = ring.nodes().stream().filter(n -> n.self().equals(planned.get(1))).findFirst().orElseThrow();
        planned2.close(); // still a member until the failure detector notices
        List<Member> holders = writer.storage().write("b-r-1", ByteBuffer.wrap(data), crc(data), true, 2, released::incrementAndGet)
                .get(30, TimeUnit.SECONDS);
        assertThat(holders).hasSize(2).doesNotContain(planned2.self());
        assertThat(released).as("a copy failed, so a transport may still hold the array").hasValue(1);
    }

    @Test
    void failureDetectorRemovesAStoppedNode() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
        Member stopped = ring.node(2).self();
        ring.node(2).close();
        Deadline.poll("the stopped node to leave placement", TestingRing.AWAIT_TIMEOUT, () -> !ring.node(0).membership().isLive(stopped)
                && !ring.node(1).membership().isLive(stopped));
        assertThat(ring.node(0).membership().members()).hasSize(2);
    }

    @Test
    void nodesWithDifferentSecretsDoNotFormARing() throws Exception {
        NodeConfig config = TestingRing.testConfig();
        try (RingNode a = RingNode.start(config.withSecret("alpha").withPortAndStore(0, root.resolve("a")));
                RingNode b = RingNode.start(config.withSecret("beta").withPortAndStore(0, root.resolve("b")));
                RingNode c = RingNode.start(config.withSecret("alpha").withPortAndStore(0, root.resolve("c")))) {
            Deadline.poll("the two nodes sharing the secret to see each other", TestingRing.AWAIT_TIMEOUT, () -> a.membership().isLive(c.self()) && c.membership().isLive(a.self()));
            assertThat(a.membership().isLive(b.self())).isFalse();
            assertThat(b.membership().members()).containsExactly(b.self());
        }
    }

    @Test
    void nodesInOtherProcessesJoinThroughSeeds() throws Exception {
        // Seeds are how processes find each other; a seed-only join must work without the JVM registry.
        NodeConfig config = TestingRing.testConfig();
        try (RingNode seed = RingNode.start(config.withPortAndStore(0, root.resolve("seed")))) {
            NodeConfig joiner = config.withSeeds(List.of(seed.self().id()));
            try (RingNode other = RingNode.start(joiner.withPortAndStore(0, root.resolve("other")))) {
                Deadline.poll("seed and joiner to see each other", TestingRing.AWAIT_TIMEOUT, () -> seed.membership().isLive(other.self()) && other.membership().isLive(seed.self()));
            }
        }
    }

    /**
     * An interrupted thread is told so even when what it waits for has completed: a cancelled
     * checkpoint stream must not publish its file just because its last write landed first.
     */
    @Test
    void anInterruptedThreadIsToldSoEvenWhenTheFutureHasCompleted() {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> RingStorage.await(CompletableFuture.completedFuture("done")))
                    .isInstanceOf(java.io.InterruptedIOException.class);
            assertThat(Thread.currentThread().isInterrupted()).as("the interrupt stays set").isTrue();
        } finally {
            Thread.interrupted();
        }
    }

}
