package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code LINKS} answer on the wire: what goes in comes out, and a broken answer is refused naming what broke. */
class MeasuredLinkTest {

    private static final MeasuredLink A_TO_B = new MeasuredLink("127.0.0.1:7001", "127.0.0.1:7002", 118.5e6,
            Duration.ofMillis(2_500));
    private static final MeasuredLink B_TO_ME = new MeasuredLink("127.0.0.1:7002", "127.0.0.1:7003", 9.25e6,
            Duration.ZERO);

    @Test
    void linksSurviveTheWire() {
        assertThat(MeasuredLink.decode(MeasuredLink.encode(List.of(A_TO_B, B_TO_ME)))).containsExactly(A_TO_B, B_TO_ME);
        assertThat(MeasuredLink.decode(MeasuredLink.encode(List.of()))).isEmpty();
    }

    @Test
    void aCountBeyondThePayloadIsRefused() {
        byte[] payload = MeasuredLink.encode(List.of(A_TO_B));
        ByteBuffer.wrap(payload).putInt(1_000);
        assertThatThrownBy(() -> MeasuredLink.decode(payload)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claim 1000 entries");
        ByteBuffer.wrap(payload).putInt(-1);
        assertThatThrownBy(() -> MeasuredLink.decode(payload)).hasMessageContaining("claim -1 entries");
        assertThatThrownBy(() -> MeasuredLink.decode(new byte[2])).hasMessageContaining("no count");
    }

    @Test
    void aCutAnswerIsRefusedNamingTheEntry() {
        byte[] payload = MeasuredLink.encode(List.of(A_TO_B, B_TO_ME));
        byte[] cut = Arrays.copyOf(payload, payload.length - 3);
        assertThatThrownBy(() -> MeasuredLink.decode(cut)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Measured link 1").hasMessageContaining("cut short");
        byte[] longer = Arrays.copyOf(payload, payload.length + 1);
        assertThatThrownBy(() -> MeasuredLink.decode(longer)).hasMessageContaining("1 unexpected bytes");
    }

    @Test
    void anIdLongerThanTheAnswerIsRefused() {
        ByteBuffer payload = ByteBuffer.allocate(4 + 2 + 20).putInt(1).putShort((short) 60_000);
        assertThatThrownBy(() -> MeasuredLink.decode(payload.array())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Measured link 0 of 60000 bytes exceeds");
    }

    @Test
    void aRateThatIsNoRateOrANegativeAgeIsRefused() {
        for (double rate : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            byte[] payload = entry("a", "b", rate, 10);
            assertThatThrownBy(() -> MeasuredLink.decode(payload)).as("rate %s", rate)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a -> b")
                    .hasMessageContaining("positive, finite rate");
        }
        assertThatThrownBy(() -> MeasuredLink.decode(entry("a", "b", 1e6, -5))).hasMessageContaining("PT-0.005S");
        assertThatThrownBy(() -> MeasuredLink.decode(entry("", "b", 1e6, 5))).hasMessageContaining("needs both ends");
    }

    @Test
    void noMoreLinksThanOneAnswerCarries() {
        List<MeasuredLink> tooMany = java.util.Collections.nCopies(MeasuredLink.MAX_LINKS + 1, A_TO_B);
        assertThatThrownBy(() -> MeasuredLink.encode(tooMany)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("At most " + MeasuredLink.MAX_LINKS);
    }

    private static byte[] entry(String from, String to, double rate, long ageMillis) {
        byte[] f = from.getBytes(StandardCharsets.UTF_8);
        byte[] t = to.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(4 + 2 + f.length + 2 + t.length + 16).putInt(1).putShort((short) f.length).put(f)
                .putShort((short) t.length).put(t).putDouble(rate).putLong(ageMillis).array();
    }
}
