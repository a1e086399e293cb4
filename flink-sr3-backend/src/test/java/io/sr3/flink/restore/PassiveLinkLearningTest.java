package io.sr3.flink.restore;

import io.sr3.flink.node.PerTestRingExtension;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.node.TestingRing;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node learns the links from its peers from the blocks it reads from them, and the links to
 * them from the blocks it writes there, without a probe or a restore: its restore plans start
 * from measured links. On real sockets in one JVM.
 */
class PassiveLinkLearningTest {

    private static final int BLOCK = TestingRing.SAMPLE_BLOCK;

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @Test
    void blocksReadFromAPeerTeachTheLinkFromItAndWritesToItTheLinkToIt() throws Exception {
        TestingRing ring = rings.start(2, TestingRing.sampleBlockConfig());
        RingNode writer = ring.node(0);
        RingNode peer = ring.node(1);

        // Node 0 is this JVM's file system node: it writes, and replicates every block to node 1.
        Path file = new Path("sr3:///passive-links/" + UUID.randomUUID() + "/data");
        FileSystem fs = file.getFileSystem();
        byte[] data = new byte[4 * BLOCK];
        new Random(11).nextBytes(data);
        try (FSDataOutputStream out = fs.create(file, WriteMode.NO_OVERWRITE)) {
            out.write(data);
        }
        assertThat(NetworkView.of(writer).toThisNode().source(peer.self().id()))
                .as("a write's time is the other direction's and the peer's disk").startsWith("rate default");
        assertThat(NetworkView.of(writer).measuredLinks(writer.self().id())).as("what the writer reports to LINKS")
                .anySatisfy(link -> assertThat(List.of(link.from(), link.to()))
                        .containsExactly(writer.self().id(), peer.self().id()));

        // Node 1 reads a block from node 0: a sample of the link from node 0 to node 1.
        String key = writer.store().keys("b-").get(0);
        byte[] block = RingStorage.await(peer.get(writer.self(), key));

        assertThat(block).hasSize(BLOCK);
        assertThat(NetworkView.of(peer).toThisNode().source(writer.self().id())).as("after reading a block from node 0")
                .startsWith("rate measured");
        assertThat(NetworkView.of(peer).toThisNode().link(writer.self().id())).isNotEqualTo(NetworkView.DEFAULT_LINK);
    }
}
