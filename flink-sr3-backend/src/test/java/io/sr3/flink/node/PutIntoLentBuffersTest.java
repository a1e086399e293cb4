package io.sr3.flink.node;

import io.sr3.flink.testing.Deadline;
import io.sr3.flink.transport.BlockBuffers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** A replica receives a full block into a lent direct buffer, stores it from there and gives the buffer back. */
class PutIntoLentBuffersTest {

    @RegisterExtension final PerTestRingExtension rings = new PerTestRingExtension();

    @Test
    void fullBlocksPutOnAPeerAreStoredFromLentBuffersThatComeBack() throws Exception {
        TestingRing ring = rings.start(2, TestingRing.testConfig());
        RingNode writer = ring.node(0);
        RingNode replica = ring.node(1);
        Random random = new Random(3);
        byte[][] blocks = new byte[12][];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = new byte[writer.config().blockSize()];
            assertThat(blocks[i].length).isGreaterThanOrEqualTo(BlockBuffers.MIN_POOLED_BYTES);
            random.nextBytes(blocks[i]);
            writer.put(replica.self(), "b-put-" + i, blocks[i]).join();
        }

        for (int i = 0; i < blocks.length; i++) {
            assertThat(replica.store().get("b-put-" + i)).as("block %d as stored", i).isEqualTo(blocks[i]);
        }
        assertThat(replica.blockBuffers().created()).as("received into direct buffers").isPositive();
        assertThat(replica.blockBuffers().heapFallbacks()).isZero();
        Deadline.poll("the replica to give every buffer back", TestingRing.AWAIT_TIMEOUT, () -> replica.blockBuffers().lent() == 0);
        assertThat(replica.stats()).containsEntry("blockBuffersLent", 0L).containsEntry("blockBufferHeapFallbacks", 0L);
    }
}
