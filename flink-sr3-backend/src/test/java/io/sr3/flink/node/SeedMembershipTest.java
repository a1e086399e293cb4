package io.sr3.flink.node;

import io.sr3.flink.Sr3RingNodeMain;
import io.sr3.flink.ring.Member;
import io.sr3.flink.testing.Deadline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Membership across processes: a ring node in a child JVM joins through {@code sr3.ring.seeds}
 * (no shared registry), serves blocks, and leaves placement after it is killed with SIGKILL. The
 * child takes the ring's secret from a file or its environment, never from its command line.
 */
class SeedMembershipTest {

    @TempDir Path root;

    private Process child;

    @AfterEach
    void killChild() throws InterruptedException {
        if (child != null && child.isAlive()) {
            child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    private Process startChild(String... options) throws IOException {
        return startChild(Map.of(), ProcessBuilder.Redirect.INHERIT, options);
    }

    private Process startChild(Map<String, String> environment, ProcessBuilder.Redirect stderr, String... options)
            throws IOException {
        List<String> command = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-Djava.io.tmpdir=" + root.resolve("child-tmp"),
                "-cp", System.getProperty("java.class.path"),
                Sr3RingNodeMain.class.getName()));
        command.addAll(List.of(options));
        root.resolve("child-tmp").toFile().mkdirs();
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(stderr);
        builder.environment().remove(Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE);
        builder.environment().putAll(environment);
        return builder.start();
    }

    /** Reads the child's READY line, with a deadline. */
    private static String awaitReady(Process process) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                for (String l = out.readLine(); l != null; l = out.readLine()) {
                    if (l.startsWith("READY ")) {
                        return l.substring("READY ".length());
                    }
                }
                return null;
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        String id = line.get(60, TimeUnit.SECONDS);
        assertThat(id).as("child ring node announced itself").isNotNull();
        return id;
    }

    @Test
    void childProcessJoinsThroughSeedsAndLeavesWhenKilled() throws Exception {
        NodeConfig config = TestingRing.testConfig();
        try (RingNode local = RingNode.start(config.withPortAndStore(0, root.resolve("local")))) {
            child = startChild(
                    "sr3.ring.seeds=" + local.self().id(),
                    "sr3.store.dir=" + root.resolve("child-store"),
                    "sr3.ring.failure-detector.interval=100 ms",
                    "sr3.ring.failure-detector.timeout=1 s",
                    "sr3.block.size=64 kb",
                    "sr3.transport.max-frame-size=256 kb");
            Member remote = Member.fromId(awaitReady(child));
            Deadline.poll("the child to join through the seed", TestingRing.AWAIT_TIMEOUT, () -> !local.membership().at(remote.id()).isEmpty());

            // Blocks replicate into the other process over the socket.
            List<Member> holders = local.storage().writeAndWait("b-seed-0", new byte[] {4, 2}, true);
            assertThat(holders).hasSize(2).anyMatch(m -> m.id().equals(remote.id()));

            child.destroyForcibly(); // SIGKILL: no goodbye
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            Deadline.poll("the killed child to leave placement", TestingRing.AWAIT_TIMEOUT, () -> local.membership().at(remote.id()).isEmpty());
        }
    }

    @Test
    void childWithTheWrongSecretNeverJoins() throws Exception {
        NodeConfig config = TestingRing.testConfig().withSecret("right");
        try (RingNode local = RingNode.start(config.withPortAndStore(0, root.resolve("local")))) {
            Path secretFile = Files.writeString(root.resolve("wrong-secret"), "wrong\n");
            child = startChild(
                    "sr3.ring.seeds=" + local.self().id(),
                    "--secret-file", secretFile.toString(),
                    "sr3.store.dir=" + root.resolve("child-store"));
            Member remote = Member.fromId(awaitReady(child));
            // The child probes the seed at start and every 500 ms; wait until several probes were refused.
            Deadline.poll("the seed to refuse the child's probes", TestingRing.AWAIT_TIMEOUT, () -> local.refusedHandshakes() >= 3);
            assertThat(local.membership().at(remote.id())).isEmpty();
            assertThat(local.membership().members()).containsExactly(local.self());
        }
    }

    @Test
    void childWithTheSecretFromItsEnvironmentJoins() throws Exception {
        NodeConfig config = TestingRing.testConfig().withSecret("right");
        try (RingNode local = RingNode.start(config.withPortAndStore(0, root.resolve("local")))) {
            child = startChild(Map.of(Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE, "right"), ProcessBuilder.Redirect.INHERIT,
                    "sr3.ring.seeds=" + local.self().id(),
                    "sr3.ring.failure-detector.interval=100 ms",
                    "sr3.store.dir=" + root.resolve("child-store"));
            Member remote = Member.fromId(awaitReady(child));
            Deadline.poll("the child with the secret from its environment to join", TestingRing.AWAIT_TIMEOUT, () -> !local.membership().at(remote.id()).isEmpty());
            assertThat(local.refusedHandshakes()).isZero();
        }
    }

    @Test
    void childRefusesASecretOnItsCommandLine() throws Exception {
        Path stderr = root.resolve("child-stderr.txt");
        child = startChild(Map.of(), ProcessBuilder.Redirect.to(stderr.toFile()),
                "sr3.store.dir=" + root.resolve("child-store"), "--secret", "visible-to-ps");
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("the child exits").isTrue();
        assertThat(child.exitValue()).isEqualTo(2);
        assertThat(Files.readString(stderr)).contains("--secret-file").contains(Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE)
                .doesNotContain("visible-to-ps");
        assertThat(root.resolve("child-store")).as("no node started").doesNotExist();
    }
}
