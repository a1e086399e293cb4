package io.sr3.flink.node;

import io.sr3.flink.transport.CipherWarmUp;
import io.sr3.flink.transport.TransportLimits;
import io.sr3.flink.transport.TransportSecurity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** A storage node that seals its frames warms the cipher up when it starts, before its first checkpoint or restore. */
class CipherWarmUpAtStartTest {

    @TempDir Path store;

    @Test
    void aStorageNodeWithASharedSecretStartsTheCipherWarmUp() throws Exception {
        NodeConfig sealed = NodeConfig.defaults().withPortAndStore(0, store)
                .withTransport(TransportSecurity.ofSecret("warm-up-test"), TransportLimits.defaults());
        try (RingNode node = RingNode.start(sealed)) {
            assertThat(CipherWarmUp.started()).isTrue();
        }
    }
}
