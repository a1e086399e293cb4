package io.sr3.flink.cluster;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The kernel shapes what {@link NamespaceNetwork} says: a TCP stream between two JVMs in two of
 * its hosts runs at the shaped rate of its link, the reverse link at the host's inbound rate, and
 * the namespaces are gone after close. Skipped where namespaces cannot be made (not root).
 */
class NamespaceNetworkTest {

    private static final long SHAPED = 4_000_000;
    private static final long INBOUND = 40_000_000;

    @BeforeAll
    static void needsNamespaces() {
        String reason = NamespaceNetwork.unavailableReason();
        assumeTrue(reason == null, () -> "No namespace network here: " + reason);
    }

    @Test
    void aStreamRunsAtItsLinksShapedRate() throws Exception {
        List<String> namespaces;
        try (NamespaceNetwork network = NamespaceNetwork.create(2)) {
            network.shapeInbound(1, INBOUND);
            network.shapeInbound(2, INBOUND);
            network.shapeLink(1, 2, SHAPED);
            double slow = bytesPerSecond(network, 1, 2, 6_000_000);
            double fast = bytesPerSecond(network, 2, 1, 40_000_000);
            assertThat(slow).as("1 -> 2 shaped to %d B/s", SHAPED).isBetween(SHAPED * 0.7, SHAPED * 1.3);
            assertThat(fast).as("2 -> 1 under the inbound port of %d B/s", INBOUND)
                    .isBetween(INBOUND * 0.5, INBOUND * 1.3);
            namespaces = List.of(network.commandPrefix(1).get(3), network.commandPrefix(2).get(3));
        }
        String left = run(List.of("ip", "netns", "list"));
        for (String namespace : namespaces) {
            assertThat(left).doesNotContain(namespace);
        }
    }

    @Test
    void rejectsLinksThatAreNotInTheNetwork() throws Exception {
        try (NamespaceNetwork network = NamespaceNetwork.create(1)) {
            assertThatThrownBy(() -> network.shapeLink(1, 2, SHAPED)).hasMessage("No host 2 in a network of 1");
            assertThatThrownBy(() -> network.shapeLink(1, 1, SHAPED)).hasMessageContaining("loopback");
            assertThatThrownBy(() -> network.shapeInbound(1, 10)).hasMessageContaining("at least 1 kB/s");
        }
    }

    /** Streams {@code bytes} from a JVM in host {@code from} to one in host {@code to}; the receiver's rate. */
    private static double bytesPerSecond(NamespaceNetwork network, int from, int to, long bytes) throws Exception {
        int port = FreePorts.freePort();
        Process server = java(network, to, "serve", network.host(to), String.valueOf(port));
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).isEqualTo("listening");
            Process sender = java(network, from, "send", network.host(to), String.valueOf(port), String.valueOf(bytes));
            assertThat(sender.waitFor(60, TimeUnit.SECONDS)).as("sender done within 60 s").isTrue();
            assertThat(sender.exitValue()).as("sender exit").isZero();
            String[] result = out.readLine().split(" ");
            assertThat(Long.parseLong(result[0])).isEqualTo(bytes);
            return bytes * 1e9 / Long.parseLong(result[1]);
        } finally {
            server.destroyForcibly();
            server.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static Process java(NamespaceNetwork network, int host, String... args) throws Exception {
        List<String> command = new ArrayList<>(network.commandPrefix(host));
        command.addAll(List.of(ProcessLauncher.javaBinary(), "-Xmx64m", "-cp", ProcessLauncher.classpath(),
                TcpTransfer.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(30, TimeUnit.SECONDS);
        return output;
    }
}
