package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The fuzzer fails on each kind of decoder bug it is meant to find, naming the seed and the input. */
class FuzzerTest {

    private static final List<byte[]> VALID = List.of(ByteBuffer.allocate(8).putInt(1).putInt(7).array());

    @Test
    void aDecoderThatCountsAndRefusesPasses() throws Exception {
        Fuzzer.Result result = new Fuzzer("test: checked count").valid(VALID).refusesWith(IllegalArgumentException.class)
                .budget(2000, Duration.ofSeconds(5)).run(FuzzerTest::checkedCount);
        assertThat(result.inputs()).isEqualTo(2000);
        assertThat(result.decoded()).isPositive();
        assertThat(result.refused()).isPositive();
        assertThat(result.decoded() + result.refused()).isEqualTo(result.inputs());
    }

    @Test
    void anUntypedExceptionFailsTheRunWithTheSeedAndTheInput() {
        assertThatThrownBy(() -> new Fuzzer("test: underflow").valid(VALID).refusesWith(IllegalArgumentException.class)
                .budget(2000, Duration.ofSeconds(5)).run(input -> ByteBuffer.wrap(input).getLong()))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("-D" + Fuzzer.SEED_PROPERTY + "=" + Fuzzer.SEED)
                .hasMessageContaining("hex: ")
                .hasCauseInstanceOf(BufferUnderflowException.class);
    }

    @Test
    void anAllocationSizedByAnUncheckedCountFailsTheRun() {
        assertThatThrownBy(() -> new Fuzzer("test: unchecked count").valid(VALID).refusesWith(RuntimeException.class)
                .budget(2000, Duration.ofSeconds(5)).run(input -> {
                    int count = ByteBuffer.wrap(input).getInt();
                    if (count > 0) {
                        byte[] entries = new byte[Math.min(count, 64 << 20)]; // what a hostile count costs
                        entries[0] = 1;
                    }
                }))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("bytes (bound ");
    }

    @Test
    void aValidEncodingThatIsRefusedFailsTheRun() {
        assertThatThrownBy(() -> new Fuzzer("test: refuses everything").valid(VALID)
                .refusesWith(IllegalArgumentException.class).budget(10, Duration.ofSeconds(5)).run(input -> {
                    throw new IllegalArgumentException("no");
                }))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("VALID encoding");
    }

    @Test
    void anInputThatDoesNotReturnFailsTheRun() {
        assertThatThrownBy(() -> new Fuzzer("test: hang").valid(VALID).refusesWith(IllegalArgumentException.class)
                .budget(2000, Duration.ofSeconds(5)).hangAfter(Duration.ofMillis(200)).run(input -> {
                    if (input.length > 100) {
                        while (!Thread.currentThread().isInterrupted()) {
                            LockSupport.parkNanos(1_000_000); // an endless loop the watchdog's interrupt ends
                        }
                    }
                }))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("did not return within");
    }

    private static void checkedCount(byte[] input) {
        ByteBuffer buffer = ByteBuffer.wrap(input);
        if (buffer.remaining() < 4) {
            throw new IllegalArgumentException("no count");
        }
        int count = buffer.getInt();
        if (count < 0 || count > buffer.remaining() / 4) {
            throw new IllegalArgumentException("count " + count + " exceeds " + buffer.remaining() + " bytes");
        }
        for (int i = 0; i < count; i++) {
            buffer.getInt();
        }
    }
}
