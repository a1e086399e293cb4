package io.sr3.flink.restore;

import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.Structure;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.ring.Member;
import io.sr3.flink.testing.Deadline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Star, line and tree restores over five real nodes: node 0 recovers, nodes 1-4 hold every block
 * twice. Faults are real: a replica with wrong bytes, a holder whose sockets close mid-restore.
 */
class RestoreExecutorTest {

    private static final int BLOCKS = 48;
    private static final int BLOCK_SIZE = 32 * 1024;

    @TempDir Path root;

    private TestingRing ring;
    private RingNode recovering;
    private final List<byte[]> contents = new ArrayList<>();
    private final List<BlockFetch> fetches = new ArrayList<>();

    @BeforeEach
    void placeBlocks() throws Exception {
        ring = TestingRing.start(5, TestingRing.testConfig(), root);
        recovering = ring.node(0);
        Random random = new Random(42);
        for (int i = 0; i < BLOCKS; i++) {
            byte[] data = new byte[BLOCK_SIZE - random.nextInt(1024)];
            random.nextBytes(data);
            RingNode first = ring.node(1 + i % 4);
            RingNode second = ring.node(1 + (i + 1) % 4);
            String key = "b-restore-" + i;
            first.store().put(key, data);
            second.store().put(key, data);
            contents.add(data);
            fetches.add(new BlockFetch(key, data.length, crc(data), List.of(first.self(), second.self()),
                    "block " + i + " of the test state"));
        }
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    @ParameterizedTest
    @EnumSource(Structure.class)
    void everyStructureRestoresEveryBlockBitExact(Structure structure) throws Exception {
        Collected collected = new Collected();
        RestoreReport report = executor(structure).restore("test state", fetches, collected);

        collected.assertExactly(contents);
        assertThat(report.structure()).isEqualTo(structure);
        assertThat(report.note()).isNull();
        assertThat(report.blocks()).isEqualTo(BLOCKS);
        assertThat(report.bytes()).isEqualTo(contents.stream().mapToLong(b -> b.length).sum());
        assertThat(report.refetchedBlocks()).isZero();
        assertThat(report.logLine()).contains("by " + structure.name().toLowerCase(), "forced");
        assertThat(RestoreStats.of(recovering).restores(structure)).isEqualTo(1);
        assertThat(NetworkView.of(recovering).holderLoad().snapshot()).as("nothing left pending on any holder").isEmpty();
        assertThat(recovering.metrics().bytesReadRemote.get()).as("restored bytes count as remote reads").isEqualTo(report.bytes());
    }

    @Test
    void autoPicksAStructureAndRecordsItsPrediction() throws Exception {
        Collected collected = new Collected();
        RestoreReport report = new RestoreExecutor(recovering, RestoreSettings.defaults()).restore("test state", fetches, collected);

        collected.assertExactly(contents);
        assertThat(report.requested()).isNull();
        assertThat(report.predictedSeconds()).containsKeys(Structure.STAR, Structure.LINE, Structure.TREE);
        assertThat(report.predictionError()).isNotNaN();
        assertThat(RestoreStats.of(recovering).medianPredictionError()).isEqualTo(report.predictionError());
        assertThat(report.logLine()).contains("(auto;");
    }

    @ParameterizedTest
    @EnumSource(value = Structure.class, names = {"LINE", "TREE"})
    void corruptReplicaIsNotForwardedAndComesFromTheOtherReplica(Structure structure) throws Exception {
        // Block 5's first holder gets other bytes under the same key: its store is consistent,
        // but the manifest's checksum is not, so the holder must refuse to send it on.
        BlockFetch victim = fetches.get(5);
        RingNode badHolder = node(victim.holders().get(0));
        byte[] wrong = contents.get(5).clone();
        wrong[100] ^= 0x5A;
        badHolder.store().put(victim.key(), wrong);
        // Only the bad holder is listed first for every block it holds; make it the one the plan uses.
        List<BlockFetch> onlyBadFirst = new ArrayList<>(fetches);
        onlyBadFirst.set(5, new BlockFetch(victim.key(), victim.length(), victim.crc32c(), List.of(badHolder.self()),
                victim.description()));

        Collected collected = new Collected();
        RestoreReport report = executor(structure).restore("test state", onlyBadFirst, collected);

        collected.assertExactly(contents);
        assertThat(report.refetchedBlocks()).isEqualTo(1);
        assertThat(report.replans()).isZero();
    }

    @ParameterizedTest
    @EnumSource(value = Structure.class, names = {"LINE", "TREE"})
    void holderStoppedMidRestoreIsPlannedAround(Structure structure) throws Exception {
        RingNode victim = ring.node(2);
        AtomicInteger received = new AtomicInteger();
        Collected collected = new Collected() {
            @Override
            public void accept(int index, byte[] data) {
                super.accept(index, data);
                if (received.incrementAndGet() == BLOCKS / 4) {
                    victim.close(); // its server and every connection to it close now
                }
            }
        };
        RestoreReport report = executor(structure).restore("test state", fetches, collected);

        collected.assertExactly(contents);
        assertThat(victim.isRunning()).isFalse();
        assertThat(report.replans()).isGreaterThanOrEqualTo(1);
        assertThat(RestoreStats.of(recovering).replans()).isEqualTo(report.replans());
    }

    @Test
    void theRestoreRateIsPublishedForTheJobManagersPacer() throws Exception {
        RestoreReport report = executor(Structure.STAR).restore("test state", fetches, new Collected());
        assertThat(report.bytes()).isGreaterThanOrEqualTo(RestoreRates.MIN_BYTES);

        RingNode elsewhere = ring.node(3);
        Deadline.poll("the restore rate on the ring", TestingRing.AWAIT_TIMEOUT, () -> slowest(elsewhere).isPresent());
        assertThat(slowest(elsewhere).getAsDouble()).isCloseTo(report.bytes() / report.actualSeconds(),
                org.assertj.core.data.Percentage.withPercentage(1));
    }

    @Test
    void whatSeveralHoldersDeliveredAtOnceRaisesAnInboundCapacityBelowIt() throws Exception {
        NetworkView view = NetworkView.of(recovering);
        view.setInbound(100_000, 4, 0.0); // a probe on a much busier day: 0.1 MB/s

        RestoreReport report = executor(Structure.STAR).restore("test state", fetches, new Collected());

        double inbound = view.model().inboundBytesPerSecond();
        assertThat(inbound).as("at least what the port carried").isGreaterThan(100_000)
                .isGreaterThanOrEqualTo(report.bytes() / report.actualSeconds() / 2);
        assertThat(view.sources(List.of()).get("inbound port")).matches("received from [234] holders at once .*");

        view.setInbound(50_000, 4, 0.0);
        assertThat(view.sources(List.of()).get("inbound port")).as("a later probe stands").startsWith("probed");
    }

    private static java.util.OptionalDouble slowest(RingNode reader) {
        try {
            return RestoreRates.slowest(reader, java.time.Duration.ofHours(1));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void forcedTreeWithOneHolderFallsBackAndSaysSo() throws Exception {
        RingNode only = ring.node(3);
        List<BlockFetch> single = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            byte[] data = contents.get(i);
            only.store().put("b-single-" + i, data);
            single.add(new BlockFetch("b-single-" + i, data.length, crc(data), List.of(only.self()), "block " + i));
        }
        Collected collected = new Collected();
        RestoreReport report = executor(Structure.TREE).restore("one holder", single, collected);

        collected.assertExactly(contents.subList(0, 4));
        assertThat(report.structure()).isEqualTo(Structure.STAR);
        assertThat(report.note()).contains("tree cannot run with 1 sender(s)", "using star");
        assertThat(report.logLine()).contains("tree cannot run");
    }

    @Test
    void blocksHeldLocallyAreNotFetched() throws Exception {
        byte[] data = contents.get(0);
        recovering.store().put("b-local", data);
        Member elsewhere = ring.node(1).self();
        BlockFetch local = new BlockFetch("b-local", data.length, crc(data), List.of(elsewhere, recovering.self()), "local block");
        Collected collected = new Collected();
        RestoreReport report = executor(Structure.STAR).restore("local", List.of(local), collected);

        collected.assertExactly(List.of(data));
        assertThat(report.localBlocks()).isEqualTo(1);
        assertThat(report.holders()).isZero();
    }

    @Test
    void theTimeToReadLocalBlocksIsPredictedAndItsRateLearned() throws Exception {
        List<BlockFetch> local = new ArrayList<>();
        List<byte[]> expected = new ArrayList<>();
        Random random = new Random(5);
        for (int i = 0; i < 8; i++) {
            byte[] data = new byte[128 * 1024];
            random.nextBytes(data);
            recovering.store().put("b-own-" + i, data);
            local.add(new BlockFetch("b-own-" + i, data.length, crc(data), List.of(recovering.self()), "own block " + i));
            expected.add(data);
        }
        NetworkView view = NetworkView.of(recovering);
        assertThat(view.localReadBytesPerSecond()).isEqualTo(NetworkView.DEFAULT_LOCAL_READ_BYTES_PER_SECOND);
        Collected collected = new Collected();

        RestoreReport report = executor(Structure.STAR).restore("own blocks", local, collected);

        collected.assertExactly(expected);
        assertThat(report.holders()).as("nothing fetched over the network").isZero();
        // 1 MiB at the assumed 200 MB/s: the network plan alone would predict nothing.
        assertThat(report.predicted()).isCloseTo(8 * 128 * 1024 / NetworkView.DEFAULT_LOCAL_READ_BYTES_PER_SECOND,
                within(1e-9));
        assertThat(report.linkSources()).as("%s", report.logLine())
                .containsEntry(NetworkView.LOCAL_READS, "200.0 MB/s: default");
        assertThat(view.localReadBytesPerSecond()).as("measured by this restore")
                .isNotEqualTo(NetworkView.DEFAULT_LOCAL_READ_BYTES_PER_SECOND);
        assertThat(view.localReadEstimate()).endsWith("MB/s: measured 0 s ago");
    }

    @Test
    void ownBlocksAreWrittenFromTheNodesReusedDirectBuffersNotFromNewArrays() throws Exception {
        List<BlockFetch> own = ownBlocks("b-buffered-", 3 * RestoreSettings.LOCAL_READS_IN_FLIGHT, blockSize());
        BufferSink sink = new BufferSink();

        RestoreReport report = executor(Structure.STAR).restore("own blocks", own, sink);

        sink.assertExactly(ownContents);
        assertThat(report.localBlocks()).isEqualTo(own.size());
        assertThat(sink.arrays + sink.heapBuffers).as("blocks handed over in heap arrays").isZero();
        assertThat(sink.directBuffers).as("distinct buffers").isNotEmpty().hasSizeLessThanOrEqualTo(recovering.config().restore().blockBuffers());
    }

    @Test
    void ownBlocksAreReadWhileTheNetworkKeepsFetchingTheOthers() throws Exception {
        List<BlockFetch> all = new ArrayList<>(fetches);
        all.addAll(ownBlocks("b-mixed-", 300, blockSize()));
        List<byte[]> expected = new ArrayList<>(contents);
        expected.addAll(ownContents);
        BufferSink sink = new BufferSink();

        RestoreReport report = executor(Structure.STAR).restore("own and remote blocks", all, sink);

        sink.assertExactly(expected);
        assertThat(report.localBlocks()).isEqualTo(300);
        int lastOwn = 0;
        int firstRemote = Integer.MAX_VALUE;
        for (int position = 0; position < sink.order.size(); position++) {
            if (sink.order.get(position) >= fetches.size()) {
                lastOwn = position;
            } else {
                firstRemote = Math.min(firstRemote, position);
            }
        }
        // Before, the own blocks were all read first, and the fetches beyond the first window waited for them.
        assertThat(firstRemote).as("position of the first remote block delivered, before the last own one at %d",
                lastOwn).isLessThan(lastOwn);
    }

    @Test
    void restoresRunningAtOnceOnOneNodeBothCompleteInItsPooledBuffersAndGiveThemBack() throws Exception {
        List<BlockFetch> first = ownBlocks("b-first-", 10, blockSize());
        List<byte[]> firstContents = List.copyOf(ownContents);
        ownContents.clear();
        List<BlockFetch> second = ownBlocks("b-second-", 10, blockSize());
        BufferSink firstSink = new BufferSink();
        BufferSink secondSink = new BufferSink();
        java.util.concurrent.CompletableFuture<RestoreReport> other = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return executor(Structure.STAR).restore("second", second, secondSink);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });

        executor(Structure.STAR).restore("first", first, firstSink);
        other.get(30, java.util.concurrent.TimeUnit.SECONDS);

        firstSink.assertExactly(firstContents);
        secondSink.assertExactly(ownContents);
        java.util.Set<ByteBuffer> all = new java.util.HashSet<>(firstSink.directBuffers);
        all.addAll(secondSink.directBuffers);
        assertThat(all).as("buffers of both restores").isNotEmpty().hasSizeLessThanOrEqualTo(recovering.config().restore().blockBuffers());
        assertThat(firstSink.heapBuffers + secondSink.heapBuffers).isZero();
        assertThat(recovering.blockBuffers().lent()).as("buffers still lent").isZero();
    }

    @Test
    void anOwnBlockLargerThanTheBuffersIsStillRestored() throws Exception {
        int larger = recovering.blockBuffers().bufferBytes() + 1; // written under a larger block size
        List<BlockFetch> own = ownBlocks("b-large-", 2, larger);
        BufferSink sink = new BufferSink();

        executor(Structure.STAR).restore("large own blocks", own, sink);

        sink.assertExactly(ownContents);
        assertThat(sink.directBuffers).isEmpty();
        assertThat(sink.heapBuffers).isEqualTo(2);
    }

    @Test
    void aDamagedLocalCopyJoinsThePlanBesideTheRemoteBlocks() throws Exception {
        byte[] damaged = contents.get(0);
        byte[] remote = contents.get(1);
        Member elsewhere = ring.node(1).self();
        ring.node(1).store().put("b-damaged-here", damaged);
        recovering.store().put("b-damaged-here", damaged, crc(damaged) ^ 1); // fails verification when read
        ring.node(1).store().put("b-remote-only", remote);
        List<BlockFetch> fetches = List.of(
                new BlockFetch("b-damaged-here", damaged.length, crc(damaged), List.of(recovering.self(), elsewhere),
                        "damaged local block"),
                new BlockFetch("b-remote-only", remote.length, crc(remote), List.of(elsewhere), "remote block"));
        Collected collected = new Collected();
        RestoreReport report = executor(Structure.STAR).restore("damaged", fetches, collected);

        collected.assertExactly(List.of(damaged, remote));
        assertThat(report.localBlocks()).isZero();
    }

    @Test
    void blockWithoutAnyIntactReplicaFailsNamingIt() throws Exception {
        BlockFetch lost = new BlockFetch("b-never-written", 10, 0, List.of(ring.node(1).self()), "block 7 of sr3:///lost-file");
        assertThatThrownBy(() -> executor(Structure.STAR).restore("lost", List.of(lost), new Collected()))
                .hasMessageContaining("block 7 of sr3:///lost-file")
                .hasMessageContaining("b-never-written");
        assertThat(NetworkView.of(recovering).holderLoad().snapshot()).as("a failed restore leaves no load behind").isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Structure.class)
    void fullBlocksFromOtherNodesArriveInLentDirectBuffersThatEveryNodeGetsBack(Structure structure) throws Exception {
        List<BlockFetch> remote = new ArrayList<>();
        List<byte[]> expected = new ArrayList<>();
        Random random = new Random(5);
        for (int i = 0; i < 8; i++) {
            byte[] data = new byte[blockSize()];
            random.nextBytes(data);
            RingNode first = ring.node(1 + i % 4);
            RingNode second = ring.node(1 + (i + 1) % 4);
            first.store().put("b-full-" + i, data);
            second.store().put("b-full-" + i, data);
            remote.add(new BlockFetch("b-full-" + i, data.length, crc(data), List.of(first.self(), second.self()),
                    "full block " + i));
            expected.add(data);
        }
        BufferSink sink = new BufferSink();

        executor(structure).restore("full blocks", remote, sink);

        sink.assertExactly(expected);
        assertThat(sink.arrays + sink.heapBuffers).as("blocks handed over in heap memory").isZero();
        assertThat(sink.directBuffers).isNotEmpty();
        for (RingNode node : ring.nodes()) {
            Deadline.poll(node.self().id() + " to have every lent buffer back", TestingRing.AWAIT_TIMEOUT, () -> node.blockBuffers().lent() == 0);
        }
    }

    private final List<byte[]> ownContents = new ArrayList<>();

    /** The recovering node's block size, that of its own-block buffers. */
    private int blockSize() {
        return recovering.config().blockSize();
    }

    /** Puts {@code count} random blocks of {@code size} bytes into the recovering node's own store only. */
    private List<BlockFetch> ownBlocks(String prefix, int count, int size) throws Exception {
        List<BlockFetch> own = new ArrayList<>();
        Random random = new Random(count * 31L + size);
        for (int i = 0; i < count; i++) {
            byte[] data = new byte[size];
            random.nextBytes(data);
            recovering.store().put(prefix + i, data);
            own.add(new BlockFetch(prefix + i, data.length, crc(data), List.of(recovering.self()), "own block " + i));
            ownContents.add(data);
        }
        return own;
    }

    private RestoreExecutor executor(Structure structure) {
        return new RestoreExecutor(recovering, new RestoreSettings(structure, 2, 6));
    }

    private RingNode node(Member member) {
        return ring.nodes().stream().filter(n -> n.self().sameNode(member)).findFirst().orElseThrow();
    }

    private static int crc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
    }

    /** Copies what it is given and notes whether it came as an array or in which direct buffer. */
    private static class BufferSink implements BlockSink {
        private final java.util.Map<Integer, byte[]> received = new java.util.HashMap<>();
        private final java.util.Set<ByteBuffer> directBuffers =
                java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        private final List<Integer> order = new ArrayList<>();
        private int arrays;
        private int heapBuffers;

        @Override
        public synchronized void accept(int index, byte[] data) {
            arrays++;
            order.add(index);
            received.put(index, data.clone());
        }

        @Override
        public synchronized void accept(int index, ByteBuffer data) {
            if (data.isDirect()) {
                directBuffers.add(data);
            } else {
                heapBuffers++;
            }
            order.add(index);
            byte[] copy = new byte[data.remaining()];
            data.duplicate().get(copy);
            assertThat(received.put(index, copy)).as("block %d delivered twice", index).isNull();
        }

        synchronized void assertExactly(List<byte[]> expected) {
            assertThat(received).hasSize(expected.size());
            for (int i = 0; i < expected.size(); i++) {
                assertThat(received.get(i)).as("block %d", i).isEqualTo(expected.get(i));
            }
        }
    }

    private static class Collected implements BlockSink {
        private final List<byte[]> received = new ArrayList<>();

        @Override
        public synchronized void accept(int index, byte[] data) {
            while (received.size() <= index) {
                received.add(null);
            }
            assertThat(received.get(index)).as("block %d delivered twice", index).isNull();
            received.set(index, data);
        }

        synchronized void assertExactly(List<byte[]> expected) {
            assertThat(received).hasSize(expected.size());
            for (int i = 0; i < expected.size(); i++) {
                assertThat(received.get(i)).as("block %d", i).isEqualTo(expected.get(i));
            }
        }
    }
}
