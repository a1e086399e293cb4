package io.sr3.flink.ring;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Member records and lists round-trip, and hostile counts and lengths are refused before anything is allocated. */
class MemberCodecTest {

    /** Far below what a list sized by a hostile count allocates (megabytes), far above an exception's cost. */
    private static final long SMALL_ALLOCATION = 256 * 1024;

    private static final Member A = new Member("n0000000000000001", "10.0.0.1", 6130, "zone-a");
    private static final Member B = new Member("10.0.0.2", 6131, "");

    @Test
    void recordsAndListsRoundTrip() {
        assertThat(MemberCodec.decode(MemberCodec.encode(A))).isEqualTo(A);
        assertThat(MemberCodec.decodeList(MemberCodec.encodeList(List.of(A, B)))).containsExactly(A, B);
        assertThat(MemberCodec.decodeList(MemberCodec.encodeList(List.of()))).isEmpty();
    }

    @Test
    void aHugeMemberCountIsRefusedNamingTheCountAndTheBytesLeft() {
        byte[] list = ByteBuffer.allocate(4 + 20).putInt(Integer.MAX_VALUE).array();
        assertThatThrownBy(() -> MemberCodec.decodeList(list))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("member count " + Integer.MAX_VALUE)
                .hasMessageContaining("20 bytes left");
    }

    @Test
    void aNegativeMemberCountIsRefused() {
        byte[] list = ByteBuffer.allocate(4 + 20).putInt(-1).array();
        assertThatThrownBy(() -> MemberCodec.decodeList(list))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("member count -1")
                .hasMessageContaining("20 bytes left");
    }

    @Test
    void aCountTheBytesCannotHoldAllocatesNothingLarge() {
        // One member per byte fits no list: every record takes at least MIN_RECORD_BYTES.
        byte[] list = ByteBuffer.allocate(4 + 1_000_000).putInt(1_000_000).array();
        Runnable decode = () -> {
            try {
                MemberCodec.decodeList(list);
            } catch (IllegalArgumentException expected) {
                // measured below
            }
        };
        decode.run(); // loads the classes involved: their allocation is not the decoder's
        assertThat(allocatedBy(decode)).as("bytes allocated refusing a list that claims 1,000,000 members")
                .isLessThan(SMALL_ALLOCATION);
        assertThatThrownBy(() -> MemberCodec.decodeList(list))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("member count 1000000")
                .hasMessageContaining("1000000 bytes left");
    }

    @Test
    void aStringLengthPastTheEndIsRefusedNamingTheField() {
        byte[] record = MemberCodec.encode(A);
        byte[] cut = Arrays.copyOf(record, 2 + 5); // the node id claims 17 bytes, 5 follow
        assertThatThrownBy(() -> MemberCodec.decode(cut))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("node id length 17")
                .hasMessageContaining("5 bytes left");
        byte[] hostile = ByteBuffer.allocate(2 + 3).putShort((short) 0xFFFF).array();
        assertThatThrownBy(() -> MemberCodec.decode(hostile))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("node id length 65535")
                .hasMessageContaining("3 bytes left");
    }

    @Test
    void truncatedFieldsAndTrailingBytesAreRefusedAsIllegalArguments() {
        byte[] record = MemberCodec.encode(A);
        int portOffset = 2 + A.nodeId().length() + 2 + A.host().length();
        assertThatThrownBy(() -> MemberCodec.decode(Arrays.copyOf(record, portOffset + 2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port is truncated, 2 bytes left");
        assertThatThrownBy(() -> MemberCodec.decode(Arrays.copyOf(record, record.length + 3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("3 trailing bytes");
        assertThatThrownBy(() -> MemberCodec.decodeList(new byte[] {0, 0}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("member count is truncated, 2 bytes left");
    }

    /** Bytes the calling thread allocates while {@code action} runs (HotSpot's per-thread allocation counter). */
    private static long allocatedBy(Runnable action) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        action.run();
        return threads.getCurrentThreadAllocatedBytes() - before;
    }
}
