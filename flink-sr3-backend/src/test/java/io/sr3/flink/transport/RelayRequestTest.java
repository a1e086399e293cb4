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

    private static final List<String> MEMBERS = List.of("10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000");

    @Test
    void aRouteThroughLiveMembersOnceEachIsFollowed() {
        assertThat(new RelayRequest("b-1", 1, 1, List.of()).routeProblem(MEMBERS, 3)).isNull();
        assertThat(new RelayRequest("b-1", 1, 1, MEMBERS).routeProblem(MEMBERS, 3)).isNull();
    }

    @Test
    void aRouteThatRepeatsAHopIsRefused() {
        RelayRequest loop = new RelayRequest("b-1", 1, 1, List.of("10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.1:7000"));
        assertThat(loop.routeProblem(MEMBERS, 3)).contains("b-1").contains("names 10.0.0.1:7000 twice");
    }

    @Test
    void aRouteThroughANonMemberIsRefused() {
        RelayRequest elsewhere = new RelayRequest("b-1", 1, 1, List.of("10.0.0.1:7000", "192.168.9.9:22"));
        assertThat(elsewhere.routeProblem(MEMBERS, 3)).contains("192.168.9.9:22")
                .contains("not a live member of the ring");
    }

    @Test
    void aRouteDeeperThanTheRingIsRefused() {
        RelayRequest deep = new RelayRequest("b-1", 1, 1, MEMBERS);
        assertThat(deep.routeProblem(MEMBERS, 2)).contains("3 hops").contains("more than the 2 members");
    }

    @Test
    void hostileCountsAndLengthsAreRefusedBeforeAllocating() {
        byte[] whole = new RelayRequest("b-1", 10, 1, List.of("h:1")).encode();
        int hopCountOffset = 4 + 4 + 2 + "b-1".length();
        byte[] manyHops = Arrays.copyOf(whole, whole.length);
        manyHops[hopCountOffset] = (byte) 200; // 200 hops in the 5 bytes of one
        assertThatThrownBy(() -> RelayRequest.decode(manyHops))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hop count 200")
                .hasMessageContaining("5 bytes left");
        byte[] longKey = whole.clone();
        longKey[8] = (byte) 0xFF;
        longKey[9] = (byte) 0xFF;
        assertThatThrownBy(() -> RelayRequest.decode(longKey))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key of 65535 bytes")
                .hasMessageContaining((whole.length - 10) + " left");
    }
}
