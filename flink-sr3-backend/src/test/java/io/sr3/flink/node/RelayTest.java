package io.sr3.flink.node;

import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.RelayRequest;
import io.sr3.flink.transport.RemoteException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
        assertThat(ring.node(0).relay(request).join()).isEqualTo(data);
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

    private static int crc(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
    }
}
