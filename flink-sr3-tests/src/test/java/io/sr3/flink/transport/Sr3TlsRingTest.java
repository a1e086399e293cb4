package io.sr3.flink.transport;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.tls.TestCertificates;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Ring nodes with mutual TLS on real loopback sockets: nodes whose certificates one CA signed form
 * a ring and move blocks; a certificate of another CA, no client certificate, an expired
 * certificate and a plaintext client are each refused, and the node logs each refusal naming the
 * peer. Certificates are made by the JDK's keytool.
 */
class Sr3TlsRingTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final TransportLimits LIMITS = new TransportLimits(Duration.ofSeconds(3), Duration.ofMinutes(1), 64, 64);

    @TempDir static Path certificates;
    @TempDir Path stores;
    private static TestCertificates ca;
    private static TestCertificates otherCa;
    /** One keystore for every node of the ring (and the operator's client): its certificate names no host. */
    private static Path nodeKeystore;
    private static final List<String> warnings = new CopyOnWriteArrayList<>();
    private static AbstractAppender capture;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void makeCertificatesAndCaptureWarnings() throws IOException {
        ca = TestCertificates.newCa(certificates, "sr3-test-ca");
        otherCa = TestCertificates.newCa(certificates, "another-ca");
        nodeKeystore = ca.node("ring-node");
        capture = new AbstractAppender("sr3-tls-test", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                if (event.getLevel().isMoreSpecificThan(Level.WARN)) {
                    warnings.add(event.getMessage().getFormattedMessage());
                }
            }
        };
        capture.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().addAppender(capture, Level.WARN, null);
        context.updateLoggers();
    }

    @AfterAll
    static void stopCapturing() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().removeAppender(capture.getName());
        context.updateLoggers();
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    private RingNode node(String name) throws IOException {
        NodeConfig config = NodeConfig.defaults().withPortAndStore(0, stores.resolve(name))
                .withTransport(new TransportSecurity(ca.settings(nodeKeystore), null, false), LIMITS);
        RingNode node = RingNode.start(config);
        closeables.add(node);
        return node;
    }

    private RingStatsClient statsClient(TransportSecurity security) {
        RingStatsClient client = new RingStatsClient(security, TIMEOUT);
        closeables.add(client);
        return client;
    }

    private static TransportSecurity tls(TlsSettings settings) {
        return new TransportSecurity(settings, null, false);
    }

    private void assertRefused(RingNode node, TransportSecurity security, String why) throws Exception {
        long before = node.refusedHandshakes();
        warnings.clear();
        assertThatThrownBy(() -> statsClient(security).stats(node.self().id())).as(why).isInstanceOf(IOException.class);
        Deadline.poll("the node to count the refusal of " + why, WAIT, () -> node.refusedHandshakes() > before);
        Deadline.poll("a warning naming the refused peer (" + why + ")", WAIT,
                () -> warnings.stream().anyMatch(w -> w.contains("Refused sr3") && w.contains("/127.0.0.1:")));
    }

    @Test
    void nodesWithCertificatesOfOneCaFormARingAndMoveBlocks() throws Exception {
        RingNode a = node("node-a");
        RingNode b = node("node-b");
        Deadline.poll("both nodes to see each other over TLS", WAIT,
                () -> a.membership().members().size() == 2 && b.membership().members().size() == 2);
        byte[] data = new byte[300_000];
        new Random(1).nextBytes(data);
        a.storage().writeAndWait("b-tls-0", data, true);
        assertThat(b.get(a.self(), "b-tls-0").get()).isEqualTo(data);
        assertThat(statsClient(tls(ca.settings(nodeKeystore))).stats(a.self().id())).containsEntry("ringSize", 2L);
        assertThat(a.refusedHandshakes() + b.refusedHandshakes()).isZero();
    }

    @Test
    void aCertificateOfAnotherCaIsRefused() throws Exception {
        RingNode node = node("node-c");
        TlsSettings stranger = otherCa.settings(otherCa.node("stranger"));
        // The stranger trusts our CA: only the node's check of the stranger's certificate can refuse it.
        assertRefused(node, tls(new TlsSettings(stranger.keystore(), "pkcs12", TestCertificates.PASSWORD,
                TestCertificates.PASSWORD, ca.truststore(), "pkcs12", TestCertificates.PASSWORD, stranger.protocols(),
                stranger.cipherSuites())), "a certificate of another CA");
    }

    @Test
    void aPeerWithoutACertificateIsRefused() throws Exception {
        RingNode node = node("node-d");
        // A keystore with no key: the peer can check the node but has nothing to present.
        assertRefused(node, tls(new TlsSettings(ca.truststore(), "pkcs12", TestCertificates.PASSWORD,
                TestCertificates.PASSWORD, ca.truststore(), "pkcs12", TestCertificates.PASSWORD, List.of("TLSv1.2"),
                List.of())), "no client certificate");
    }

    @Test
    void anExpiredCertificateIsRefused() throws Exception {
        RingNode node = node("node-e");
        assertRefused(node, tls(ca.settings(ca.expiredNode("expired"))), "an expired certificate");
    }

    @Test
    void aPlaintextPeerIsRefused() throws Exception {
        RingNode node = node("node-f");
        assertRefused(node, TransportSecurity.none(), "a plaintext peer");
    }

    @Test
    void aNodeDoesNotTrustAPeerWhoseCertificateItsTruststoreRejects() throws Exception {
        RingNode node = node("node-g");
        TlsSettings trustsOthers = new TlsSettings(nodeKeystore, "pkcs12", TestCertificates.PASSWORD,
                TestCertificates.PASSWORD, otherCa.truststore(), "pkcs12", TestCertificates.PASSWORD, List.of("TLSv1.2"),
                List.of());
        assertThatThrownBy(() -> statsClient(tls(trustsOthers)).stats(node.self().id()))
                .hasMessageContaining("TLS");
    }
}
