package io.sr3.flink.node;

import io.sr3.flink.transport.TransportLimits;
import io.sr3.flink.transport.TransportSecurity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A ring node that other machines could reach does not start unauthenticated unless the user says so. */
class SecureByDefaultTest {

    @TempDir Path store;

    @Test
    void aNodeOnAnAddressOtherMachinesReachRefusesToStartWithoutTlsOrASecret() {
        NodeConfig wildcard = new NodeConfig("0.0.0.0", java.util.List.of(0), java.util.List.of("10.0.0.1:6130"), 2, "",
                16, store, false, null, 1 << 20, java.time.Duration.ofSeconds(2), java.time.Duration.ofMillis(100),
                java.time.Duration.ofSeconds(1), 64 * 1024);
        assertThatThrownBy(() -> RingNode.start(wildcard)).isInstanceOf(IOException.class)
                .hasMessageContaining("0.0.0.0")
                .hasMessageContaining("security.ssl.internal.enabled")
                .hasMessageContaining("sr3.transport.secret")
                .hasMessageContaining("sr3.transport.authentication: none");
    }

    @Test
    void aLoopbackNodeMayRunUnauthenticatedForLocalClusters() throws Exception {
        NodeConfig loopback = NodeConfig.defaults().withPortAndStore(0, store)
                .withTransport(TransportSecurity.none(), TransportLimits.defaults());
        try (RingNode node = RingNode.start(loopback)) {
            assertThat(node.isRunning()).isTrue();
        }
    }
}
