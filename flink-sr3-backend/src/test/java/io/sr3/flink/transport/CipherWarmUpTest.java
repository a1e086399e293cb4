package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The AES-GCM warm-up seals and opens its frames as the connections do. */
class CipherWarmUpTest {

    @Test
    void theWarmUpOpensEveryFrameItSealed() throws Exception {
        assertThat(CipherWarmUp.run()).isPositive();
    }
}
