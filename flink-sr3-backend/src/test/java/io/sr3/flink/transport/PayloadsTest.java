package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Compare-and-put payloads round-trip, and a hostile one fails with a precise message before anything is allocated. */
class PayloadsTest {

    @Test
    void checkBlocksRequestsAndAnswersRoundTripAndHostileCountsAreRefused() {
        java.util.List<Payloads.ExpectedBlock> asked = java.util.List.of(
                new Payloads.ExpectedBlock("b-1", 10, -7), new Payloads.ExpectedBlock("b-2", 0, 0));
        assertThat(Payloads.checkBlocks(Payloads.checkBlocks(asked))).isEqualTo(asked);
        java.util.List<Payloads.BlockState> states = java.util.List.of(
                new Payloads.BlockState(0, ""), new Payloads.BlockState(2, "header says 5 bytes, file holds 3"));
        assertThat(Payloads.blockStates(Payloads.blockStates(states))).isEqualTo(states);

        byte[] hostile = ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE).array();
        assertThatThrownBy(() -> Payloads.checkBlocks(hostile)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claims " + Integer.MAX_VALUE);
        assertThatThrownBy(() -> Payloads.blockStates(hostile)).isInstanceOf(IllegalArgumentException.class);
        byte[] unknownState = ByteBuffer.allocate(7).putInt(1).put((byte) 9).putShort((short) 0).array();
        assertThatThrownBy(() -> Payloads.blockStates(unknownState)).hasMessageContaining("unknown state 9");
        byte[] trailing = Arrays.copyOf(Payloads.checkBlocks(asked), Payloads.checkBlocks(asked).length + 1);
        assertThatThrownBy(() -> Payloads.checkBlocks(trailing)).hasMessageContaining("trailing");
    }

    @Test
    void compareAndPutRoundTripsAbsentValuesAndBytes() {
        Payloads.CompareAndPut decoded = Payloads.compareAndPut(Payloads.compareAndPut("m-1", null, new byte[] {7, 8}));
        assertThat(decoded.key()).isEqualTo("m-1");
        assertThat(decoded.expected()).isNull();
        assertThat(decoded.replacement()).containsExactly(7, 8);
        Payloads.CompareAndPut delete = Payloads.compareAndPut(Payloads.compareAndPut("m-1", new byte[0], null));
        assertThat(delete.expected()).isEmpty();
        assertThat(delete.replacement()).isNull();

        byte[] answer = Payloads.swap(false, new byte[] {1, 2, 3});
        assertThat(Payloads.swapped(answer)).isFalse();
        assertThat(Payloads.swapFound(answer)).containsExactly(1, 2, 3);
        assertThat(Payloads.swapFound(Payloads.swap(true, null))).isNull();
    }

    @Test
    void aLengthBeyondThePayloadOrTrailingBytesAreRefused() {
        byte[] valid = Payloads.compareAndPut("m-1", new byte[] {1}, new byte[] {2});
        byte[] huge = valid.clone();
        ByteBuffer.wrap(huge).putInt(2 + 3, Integer.MAX_VALUE); // the expected value's length
        assertThatThrownBy(() -> Payloads.compareAndPut(huge)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected value of 2147483647 bytes exceeds");
        byte[] negative = valid.clone();
        ByteBuffer.wrap(negative).putInt(2 + 3, -2);
        assertThatThrownBy(() -> Payloads.compareAndPut(negative)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Payloads.compareAndPut(Arrays.copyOf(valid, valid.length + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trailing");
        assertThatThrownBy(() -> Payloads.compareAndPut(Arrays.copyOf(valid, 2 + 3 + 2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no length");
        assertThatThrownBy(() -> Payloads.swapped(new byte[2])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void listsAndCounterMapsCheckEveryCountAndLengthAgainstTheBytesLeft() {
        assertThat(Payloads.stringList(Payloads.stringList(java.util.List.of("a", "bc")))).containsExactly("a", "bc");
        assertThat(Payloads.longMap(Payloads.longMap(java.util.Map.of("x", 7L)))).containsEntry("x", 7L);
        assertThatThrownBy(() -> Payloads.stringList(new byte[3])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no count");
        byte[] claimsMany = ByteBuffer.allocate(8).putInt(1_000_000).array();
        assertThatThrownBy(() -> Payloads.stringList(claimsMany)).hasMessageContaining("claims 1000000 entries");
        byte[] longString = ByteBuffer.allocate(8).putInt(1).putShort((short) 0xFFFF).array();
        assertThatThrownBy(() -> Payloads.stringList(longString)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65535 bytes exceeds the 2 bytes left");
        byte[] noValue = ByteBuffer.allocate(4 + 2 + 1 + 7 + 3).putInt(1).putShort((short) 1).put((byte) 'x').array();
        assertThatThrownBy(() -> Payloads.longMap(Arrays.copyOf(noValue, 4 + 2 + 1 + 7)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Payloads.swapFound(new byte[0])).isInstanceOf(IllegalArgumentException.class);
    }
}
