package io.sr3.flink.node;

import io.sr3.flink.testing.Deadline;
import io.sr3.flink.transport.BlockBuffers;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.RelayRequest;
import io.sr3.flink.transport.RemoteException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** RELAY_BLOCK between real nodes: forwarding, and the errors a route can end in. */
class RelayTest {

    @TempDir Path root;

    private TestingRing ring;

    @BeforeEach
    void start() throws Exception {
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    @Test
    void blockTravelsTwoHopsVerified() throws Exception {
        byte[] data = "relayed".getBytes();
        ring.node(2).store().put("b-r", data);
        RelayRequest request = new RelayRequest("b-r", data.length, crc(data),
                List.of(ring.node(1).self().id(), ring.node(2).self().id()));
        assertThat(bytes(ring.node(0).relay(request).join())).isEqualTo(data);
    }

    @Test
    void malformedRelayPayloadIsABadRequest() {
        assertThatThrownBy(() -> ring.node(0).client()
                        .request(ring.node(1).self().address(), MessageType.RELAY_BLOCK, new byte[] {1, 2, 3}).join())
                .hasCauseInstanceOf(RemoteException.class)
                .hasMessageContaining("BAD_REQUEST")
                .hasMessageContaining("truncated");
    }

    @Test
    void unreachableHopIsNamedAsUpstreamFailure() throws Exception {
        byte[] data = "relayed".getBytes();
        ring.node(2).store().put("b-r", data);
        String deadHop = ring.node(2).self().id();
        ring.node(2).close();
        RelayRequest request = new RelayRequest("b-r", data.length, crc(data), List.of(ring.node(1).self().id(), deadHop));

        CompletionException failure = org.junit.jupiter.api.Assertions.assertThrows(
                CompletionException.class, () -> ring.node(0).relay(request).join());
        assertThat(failure.getCause()).isInstanceOf(RelayException.class);
        assertThat(((RelayException) failure.getCause()).code()).isEqualTo(ErrorCode.UPSTREAM_FAILED);
        assertThat(failure.getCause()).hasMessageContaining(deadHop);
    }

    @Test
    void missingBlockIsNotFoundNotAnUnreachableHop() {
        RelayRequest request = new RelayRequest("b-absent", 3, 0, List.of(ring.node(1).self().id()));
        CompletionException failure = org.junit.jupiter.api.Assertions.assertThrows(
                CompletionException.class, () -> ring.node(0).relay(request).join());
        assertThat(((RelayException) failure.getCause()).code()).isEqualTo(ErrorCode.NOT_FOUND);
    }

    @Test
    void aLargeBlockCrossesTheRouteInLentDirectBuffersThatEveryNodeGetsBack() throws Exception {
        byte[] data = new byte[ring.node(0).config().blockSize()]; // a full block
        assertThat(data.length).isGreaterThanOrEqualTo(BlockBuffers.MIN_POOLED_BYTES);
        new java.util.Random(11).nextBytes(data);
        ring.node(2).store().put("b-large", data);
        RelayRequest request = new RelayRequest("b-large", data.length, crc(data),
                List.of(ring.node(1).self().id(), ring.node(2).self().id()));

        ByteBuffer received = ring.node(0).relay(request).join();

        assertThat(received.isDirect()).as("received into a lent direct buffer, not a heap array").isTrue();
        assertThat(bytes(received)).isEqualTo(data);
        assertThat(ring.node(0).blockBuffers().release(received)).isTrue();
        for (int i = 0; i < 3; i++) {
            BlockBuffers buffers = ring.node(i).blockBuffers();
            assertThat(buffers.created()).as("node %d used a direct buffer", i).isEqualTo(1);
            Deadline.poll("node " + i + " gives its buffer back", TestingRing.AWAIT_TIMEOUT, () -> buffers.lent() == 0);
        }
    }

    @Test
    void aRefusedBlockLeavesNoBufferLentOnAnyNode() throws Exception {
        byte[] data = new byte[ring.node(0).config().blockSize()];
        ring.node(2).store().put("b-other", data);
        RelayRequest request = new RelayRequest("b-other", data.length, crc(data) + 1,
                List.of(ring.node(1).self().id(), ring.node(2).self().id()));

        CompletionException failure = org.junit.jupiter.api.Assertions.assertThrows(
                CompletionException.class, () -> ring.node(0).relay(request).join());

        assertThat(((RelayException) failure.getCause()).code()).isEqualTo(ErrorCode.CORRUPT);
        for (int i = 0; i < 3; i++) {
            BlockBuffers buffers = ring.node(i).blockBuffers();
            Deadline.poll("node " + i + " gives its buffer back", TestingRing.AWAIT_TIMEOUT, () -> buffers.lent() == 0);
        }
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] copy = new byte[buffer.remaining()];
        buffer.duplicate().get(copy);
        return copy;
    }

    private static int crc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
    }
}
