package io.sr3.flink.restore;

import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.Structure;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.LinkShaper;
import io.sr3.flink.transport.LinkShaper.ShapedLink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A restore learns the paths between its holders from the holders themselves ({@code LINKS}),
 * which learned them from their own ordinary transfers: no probe runs. Real sockets in one JVM;
 * node 0 recovers, and its inbound link from node 1 is shaped slow.
 */
class HolderReportsTest {

    private static final int BLOCK = TestingRing.SAMPLE_BLOCK;
    /** Far below what loopback carries even on a loaded machine, so the plan does not hinge on noise. */
    private static final double SLOW = 4e6;
    private static final double FAST = 1e12;
    private static final Duration LATENCY = Duration.ofMillis(1);

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    /**
     * Node 1 sends slowly to node 0, node 2 fast; each holds half the blocks. Before node 2 ever
     * read from node 1, the path 1 -> 2 is only guessed (as slow as 1's link here), and a route
     * through node 2 cannot look faster than star. Once node 2 read some of node 1's blocks, as
     * repair or a reader would, node 2 reports that path fast, and the next restore routes node
     * 1's blocks through node 2.
     */
    @Test
    void anAutoRestoreRoutesThroughAHolderWhosePathItLearnedFromThatHoldersOwnReads() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.sampleBlockConfig());
        RingNode recovering = ring.node(0);
        RingNode slow = ring.node(1);
        RingNode fast = ring.node(2);
        List<BlockFetch> blocks = slowAndFastHolders(recovering, slow, fast);
        // What the recovering node learned of its own links by reading from both holders before.
        for (int i = 0; i < 4; i++) {
            BlockFetch b = blocks.get(i);
            recovering.getVerified(b.holders().get(0), b.key(), b.length(), b.crc32c()).join();
        }
        String path = slow.self().id() + "->" + fast.self().id();

        RestoreReport guessed = restore(recovering, blocks);
        assertThat(guessed.linkSources()).as("%s", guessed.logLine()).doesNotContainKey(path);
        assertThat(guessed.predictedSeconds().get(Structure.LINE)).as("%s", guessed.logLine())
                .isGreaterThan(0.9 * guessed.predictedSeconds().get(Structure.STAR));
        assertThat(NetworkView.of(recovering).model().between(slow.self().id(), fast.self().id()).bytesPerSecond())
                .as("guessed: as fast as node 1 sends here").isLessThan(3 * SLOW);

        for (int i = 0; i < 4; i += 2) { // node 2 reads node 1's blocks: an ordinary transfer, as repair makes
            BlockFetch b = blocks.get(i);
            fast.getVerified(slow.self(), b.key(), b.length(), b.crc32c()).join();
        }

        RestoreReport learned = restore(recovering, blocks);
        assertThat(learned.structure()).as("%s", learned.logLine()).isNotEqualTo(Structure.STAR);
        assertThat(learned.predicted()).as("%s", learned.logLine())
                .isLessThan(0.6 * learned.predictedSeconds().get(Structure.STAR));
        assertThat(learned.linkSources().get(path)).endsWith(" MB/s: rate reported by " + fast.self().id() + ", measured 0 s ago");
        assertThat(learned.logLine()).contains("reported by " + fast.self().id());
    }

    /**
     * A forced structure is still planned: which holder ends the chain, who sends which block. It
     * asks the holders as auto does, so a forced line delivers through the holder the recovering
     * node reaches fast, and relays the slow holder's blocks over the path that holder measured.
     */
    @Test
    void aForcedStructureIsPlannedWithTheHoldersReportsToo() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.sampleBlockConfig());
        RingNode recovering = ring.node(0);
        RingNode slow = ring.node(1);
        RingNode fast = ring.node(2);
        List<BlockFetch> blocks = slowAndFastHolders(recovering, slow, fast);
        for (int i = 0; i < 4; i++) {
            BlockFetch b = blocks.get(i);
            recovering.getVerified(b.holders().get(0), b.key(), b.length(), b.crc32c()).join();
            if (i % 2 == 0) {
                fast.getVerified(slow.self(), b.key(), b.length(), b.crc32c()).join();
            }
        }
        String path = slow.self().id() + "->" + fast.self().id();

        RestoreReport line = restore(recovering, blocks, RestoreSettings.defaults().withForced(Structure.LINE));

        assertThat(line.structure()).isEqualTo(Structure.LINE);
        assertThat(line.linkSources().get(path)).as("%s", line.logLine())
                .endsWith(" MB/s: rate reported by " + fast.self().id() + ", measured 0 s ago");
        assertThat(line.predicted()).as("%s", line.logLine()).isLessThan(0.6 * line.predictedSeconds().get(Structure.STAR));
    }

    /** Every block a node writes to a replica is a sample of its link there, which it reports to whoever asks. */
    @Test
    void writesToReplicasAreSamplesTheWriterReports() throws Exception {
        TestingRing ring = rings.start(3, TestingRing.sampleBlockConfig());
        RingNode writer = ring.node(1);
        RingNode replica = ring.node(2);
        byte[] data = new byte[BLOCK];
        new Random(3).nextBytes(data);
        writer.put(replica.self(), "b-written", data).join();

        assertThat(NetworkView.of(writer).measuredLinks(writer.self().id()))
                .anySatisfy(link -> {
                    assertThat(link.from()).isEqualTo(writer.self().id());
                    assertThat(link.to()).isEqualTo(replica.self().id());
                });
        NetworkView asking = NetworkView.of(ring.node(0));
        int heard = HolderReports.ask(ring.node(0), asking, List.of(writer.self(), replica.self()), HolderReports.DEADLINE);

        assertThat(heard).isEqualTo(1);
        assertThat(asking.sources(List.of(writer.self().id(), replica.self().id())))
                .containsEntry(writer.self().id() + "->" + replica.self().id(), "rate reported by " + writer.self().id()
                        + ", measured 0 s ago");
    }

    /** A holder that is gone answers nothing: the others' reports still count, and the restore goes on. */
    @Test
    void aHolderThatDoesNotAnswerAddsNothing() throws Exception {
        TestingRing ring = rings.start(4, TestingRing.sampleBlockConfig());
        RingNode writer = ring.node(1);
        byte[] data = new byte[BLOCK];
        writer.put(ring.node(2).self(), "b-written", ByteBuffer.wrap(data).array()).join();
        ring.node(3).close();

        NetworkView asking = NetworkView.of(ring.node(0));
        int heard = HolderReports.ask(ring.node(0), asking, List.of(writer.self(), ring.node(3).self()),
                HolderReports.DEADLINE);

        assertThat(heard).isEqualTo(1);
    }

    /** Shapes {@code slow}'s link to {@code recovering} to {@link #SLOW}; eight blocks, the even ones on {@code slow}. */
    private static List<BlockFetch> slowAndFastHolders(RingNode recovering, RingNode slow, RingNode fast) throws Exception {
        recovering.shapeInboundLinks(new LinkShaper(FAST, 8, 0, new ShapedLink(FAST, LATENCY))
                .setLink(slow.self().address(), new ShapedLink(SLOW, LATENCY)));
        List<BlockFetch> blocks = new ArrayList<>();
        Random random = new Random(7);
        for (int i = 0; i < 8; i++) {
            RingNode holder = i % 2 == 0 ? slow : fast;
            byte[] data = new byte[BLOCK];
            random.nextBytes(data);
            holder.store().put("b-" + i, data);
            blocks.add(new BlockFetch("b-" + i, BLOCK, Crc32c.of(data), List.of(holder.self()), "block " + i));
        }
        return blocks;
    }

    private static RestoreReport restore(RingNode node, List<BlockFetch> blocks) throws Exception {
        return restore(node, blocks, RestoreSettings.defaults());
    }

    private static RestoreReport restore(RingNode node, List<BlockFetch> blocks, RestoreSettings settings) throws Exception {
        return new RestoreExecutor(node, settings).restore("test state", blocks, new BlockSink() {
            @Override
            public void accept(int index, byte[] data) {}

            @Override
            public void accept(int index, ByteBuffer data) {}
        });
    }
}
