package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RelayRequestTest {

    @Test
    void roundTripsAndStepsAlongItsRoute() {
        RelayRequest request = new RelayRequest("b-1", 4096, 0xCAFEBABE, List.of("10.0.0.1:7000", "10.0.0.2:7000"));
        RelayRequest decoded = RelayRequest.decode(request.encode());
        assertThat(decoded).isEqualTo(request);
        assertThat(decoded.next().route()).containsExactly("10.0.0.2:7000");
        assertThat(decoded.next().next().route()).isEmpty();
        assertThatThrownBy(() -> decoded.next().next().next()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void truncatedPayloadIsRefusedNamingItsSize() {
        byte[] whole = new RelayRequest("b-1", 10, 1, List.of("h:1")).encode();
        byte[] truncated = Arrays.copyOf(whole, whole.length - 2);
        assertThatThrownBy(() -> RelayRequest.decode(truncated))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("truncated")
                .hasMessageContaining(String.valueOf(truncated.length));
    }

    @Test
    void trailingBytesAndNegativeLengthAreRefused() {
        byte[] whole = new RelayRequest("b-1", 10, 1, List.of()).encode();
        assertThatThrownBy(() -> RelayRequest.decode(Arrays.copyOf(whole, whole.length + 3)))
                .hasMessageContaining("3 trailing bytes");
        byte[] negative = whole.clone();
        negative[4] = (byte) 0x80; // the length field's sign bit
        assertThatThrownBy(() -> RelayRequest.decode(negative)).hasMessageContaining("negative length");
    }
}
