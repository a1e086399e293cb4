package io.sr3.flink.cluster;

import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.tls.TestCertificates;
import io.sr3.flink.tools.Sr3Admin;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static io.sr3.flink.cluster.ProcessClusterTestSupport.JOB_TIMEOUT;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.assertExactResults;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.awaitRingSize;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator's command line against a live ring of three TaskManager processes (replication
 * factor 2, two zones), each command run as its own JVM the way an operator runs it: {@code --help} with
 * nothing but the backend jar; {@code ring}, {@code ls}, {@code du}, {@code fsck} and {@code cp}
 * with the JobManager's {@code config.yaml} ({@code --conf-dir}); then {@code fsck} after one
 * replica of a block was deleted by hand from a TaskManager's store directory (under-replicated,
 * exit code 0), and after every replica of it was (lost, exit code 1), until the copy is put back
 * and the job resumes from the checkpoint exactly; with the cluster's shared
 * secret from {@code --secret-file}, or with a certificate of the cluster's CA. The tool never
 * joins the ring: every node still sees as many members afterwards.
 */
class Sr3AdminITCase extends ProcessClusterTestBase {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(120);
    /** A replica line of {@code fsck --blocks}: holder address[node id]@zone and its state. */
    private static final Pattern REPLICA = Pattern.compile("^ {4}(\\S+?:\\d+)\\S* (INTACT|MISSING|CORRUPT|UNREACHABLE)");
    private static final Pattern BLOCK = Pattern.compile("^ {2}block \\d+ (\\S+) offset");

    private record Result(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    @Test
    void ringLsDuFsckAndCpAgainstALiveRingAndFsckFindsBlocksDeletedByHand() throws Exception {
        Result helpAlone = run(List.of(backendJar().toString()), "--help");
        assertThat(helpAlone.code()).as("%s", helpAlone).isZero();
        assertThat(helpAlone.out()).contains("Usage: sr3").contains("fsck").contains("cp");
        Result ringAlone = run(List.of(backendJar().toString()), "ring", "--seeds", "127.0.0.1:1");
        assertThat(ringAlone.code()).as("%s", ringAlone).isEqualTo(2);
        assertThat(ringAlone.err()).contains("needs Flink's classes").contains("$FLINK_HOME/lib/*");

        String secret = "admin-itcase-" + System.nanoTime();
        Path secretFile = Files.writeString(tempDir.resolve("secret"), secret + "\n");
        cluster = ProcessCluster.start(ClusterSpec.sr3(3, 2).withZones(List.of("zone-a", "zone-b"))
                        .withExtraConfig(Map.of("sr3.transport.secret", secret)),
                ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(TransportSecurity.ofSecret(secret), Duration.ofSeconds(2));
        awaitRingSize(stats, cluster.liveTaskManagers(), 3);
        TestJobSpec spec = TestJobSpec.of("admin").withRecords(200_000, 1_000).withKeys(64).withPayload(1024, 4);
        Path results = tempDir.resolve("results");
        JobID job = cluster.submit(ClusterJobs.statefulJob(spec, 2, results, Duration.ofMillis(500), true, null));
        cluster.awaitAllTasksRunning(job, JOB_TIMEOUT);
        Deadline.poll("two completed checkpoints of " + job, JOB_TIMEOUT, () -> cluster.completedCheckpoints(job) >= 2,
                () -> cluster.checkpoints(job).toString());
        cluster.cancel(job);
        cluster.awaitJobStatus(job, JOB_TIMEOUT, "CANCELED");
        String checkpoint = cluster.checkpoints(job).path("latest").path("completed").path("external_path").asText();
        assertThat(checkpoint).startsWith("sr3:");
        String conf = cluster.jobManager().directory().toString();

        Result script = script(conf, "ring");
        assertThat(script.code()).as("bin/sr3 ring with FLINK_CONF_DIR: %s", script).isZero();
        assertThat(script.out()).contains("3 storage member(s)");

        Result ring = admin("--conf-dir", conf, "ring");
        assertThat(ring.code()).as("%s", ring).isZero();
        for (FlinkProcess tm : cluster.liveTaskManagers()) {
            assertThat(ring.out()).as("%s", ring).containsPattern("(?m)^" + Pattern.quote(tm.ringAddress()) + " ");
        }
        assertThat(ring.out()).contains("3 storage member(s)").contains("0 unreachable").contains(" zone-a ")
                .contains(" zone-b ");

        Result ls = admin("--conf-dir", conf, "ls", "-R", "sr3:///flink-checkpoints");
        assertThat(ls.code()).as("%s", ls).isZero();
        assertThat(ls.out()).contains(job.toString()).contains("/chk-").contains("_metadata").contains("/shared");
        Result du = admin("--conf-dir", conf, "du", checkpoint);
        assertThat(du.code()).as("%s", du).isZero();
        assertThat(du.out()).contains("_metadata").contains("(total: bytes, files)");

        Result healthy = admin("--conf-dir", conf, "fsck", "--blocks", checkpoint);
        assertThat(healthy.code()).as("%s", healthy).isZero();
        assertThat(healthy.out()).as("%s", healthy).contains("Status: HEALTHY").contains("/shared/")
                .doesNotContain("MISSING").doesNotContain("UNDER-REPLICATED");

        Path backup = tempDir.resolve("backup");
        String jobDir = checkpoint.replaceAll("/+$", "").replaceAll("/chk-\\d+$", "");
        String chk = checkpoint.replaceAll("/+$", "").replaceAll(".*/", "");
        Path copyOfChk = backup.resolve(job.toString()).resolve(chk);
        Result cp = admin("--conf-dir", conf, "cp", checkpoint, copyOfChk.toUri().toString());
        assertThat(cp.code()).as("%s", cp).isZero();
        assertThat(copyOfChk.resolve("_metadata")).isNotEmptyFile();
        assertThat(backup.resolve(job.toString()).resolve("shared")).as("RocksDB's shared files, outside %s", chk)
                .isNotEmptyDirectory();
        long copiedFiles;
        try (Stream<Path> files = Files.walk(backup)) {
            copiedFiles = files.filter(Files::isRegularFile).count();
        }
        assertThat(cp.out()).contains("Copied " + copiedFiles + " file(s)").contains("sr3 cp ");
        assertThat(healthy.out()).as("every file fsck checked was copied")
                .containsPattern("Files: " + copiedFiles + ", ");
        Result again = admin("--conf-dir", conf, "cp", checkpoint, copyOfChk.toUri().toString());
        assertThat(again.code()).as("%s", again).isEqualTo(1);
        assertThat(again.err()).contains("exists; nothing was copied");

        // One replica of one block of a state file goes: under-replicated, still readable.
        String key = null;
        List<String> holders = new ArrayList<>();
        String file = "";
        for (String line : healthy.out().split("\n")) {
            Matcher block = BLOCK.matcher(line);
            Matcher replica = REPLICA.matcher(line);
            if (line.startsWith("OK ")) {
                file = line;
            }
            if (key == null && block.find() && file.contains("/shared/")) {
                key = block.group(1);
            } else if (key != null && replica.find()) {
                holders.add(replica.group(1));
            } else if (key != null && !holders.isEmpty()) {
                break;
            }
        }
        assertThat(key).as("a block in %s", healthy).isNotNull();
        assertThat(holders).as("replicas of %s", key).hasSize(2);
        deleteByHand(holders.get(0), key);
        Result under = admin("--conf-dir", conf, "fsck", checkpoint);
        assertThat(under.code()).as("%s", under).isZero();
        assertThat(under.out()).as("%s", under).contains("Status: UNDER-REPLICATED").contains(key)
                .containsPattern(Pattern.quote(holders.get(0)) + "\\S* MISSING")
                .contains("Under-replicated blocks: 1 ");

        deleteByHand(holders.get(1), key);
        Result lost = admin("--conf-dir", conf, "fsck", checkpoint);
        assertThat(lost.code()).as("%s", lost).isEqualTo(1);
        assertThat(lost.out()).as("%s", lost).contains("Status: CORRUPT").contains(key + " offset").contains("LOST")
                .contains("lost blocks: 1;");
        String seeds = String.join(",", cluster.ringSeeds());
        Result path = admin("--seeds", seeds, "--secret-file", secretFile.toString(), "fsck", jobDir);
        assertThat(path.code()).as("fsck of the job directory through --seeds: %s", path).isEqualTo(1);
        assertThat(path.out()).as("%s", path).contains("Status: CORRUPT").contains("_metadata");
        Result noSecret = admin("--seeds", seeds, "ring");
        assertThat(noSecret.code()).as("%s", noSecret).isEqualTo(1);
        assertThat(noSecret.err()).as("%s", noSecret).contains("No storage member of the ring answered")
                .contains("credentials");

        // The backup puts the damaged checkpoint back: fsck finds it healthy again, and the job resumes from it exactly.
        Result restore = admin("--conf-dir", conf, "cp", "--overwrite", backup.resolve(job.toString()).toUri().toString(),
                jobDir);
        assertThat(restore.code()).as("%s", restore).isZero();
        Result repaired = admin("--conf-dir", conf, "fsck", checkpoint);
        assertThat(repaired.code()).as("%s", repaired).isZero();
        assertThat(repaired.out()).as("%s", repaired).contains("Status: HEALTHY");
        JobID resumed = cluster.submit(ClusterJobs.statefulJob(spec.withRecords(spec.records(), 0), 2, results,
                Duration.ofSeconds(10), false, checkpoint));
        cluster.awaitJobStatus(resumed, JOB_TIMEOUT, "FINISHED");
        assertExactResults(results, spec);

        awaitRingSize(stats, cluster.liveTaskManagers(), 3); // the tool never became a member
    }

    @Test
    void ringConnectsWithATlsCertificateOfTheClustersCa() throws Exception {
        TestCertificates ca = TestCertificates.newCa(tempDir.resolve("tls"), "cluster-ca");
        Path keystore = ca.node("flink");
        cluster = ProcessCluster.start(ClusterSpec.sr3(2, 2).withExtraConfig(Map.of(
                "security.ssl.internal.enabled", "true",
                "security.ssl.internal.keystore", keystore.toString(),
                "security.ssl.internal.keystore-password", TestCertificates.PASSWORD,
                "security.ssl.internal.key-password", TestCertificates.PASSWORD,
                "security.ssl.internal.truststore", ca.truststore().toString(),
                "security.ssl.internal.truststore-password", TestCertificates.PASSWORD)),
                ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(new TransportSecurity(ca.settings(keystore), null, false), Duration.ofSeconds(5));
        awaitRingSize(stats, cluster.liveTaskManagers(), 2);
        Path password = Files.writeString(tempDir.resolve("password"), TestCertificates.PASSWORD + "\n");
        String seeds = String.join(";", cluster.ringSeeds());

        Result ring = admin("--seeds", seeds, "--keystore", ca.node("operator").toString(), "--keystore-password-file",
                password.toString(), "--truststore", ca.truststore().toString(), "--truststore-password-file",
                password.toString(), "ring");
        assertThat(ring.code()).as("%s", ring).isZero();
        assertThat(ring.out()).contains("2 storage member(s)").contains("0 unreachable");
        Result plaintext = admin("--seeds", seeds, "-Dsr3.ring.failure-detector.timeout=1s", "ring");
        assertThat(plaintext.code()).as("%s", plaintext).isEqualTo(1);
        awaitRingSize(stats, cluster.liveTaskManagers(), 2);
    }

    private void deleteByHand(String holder, String key) throws IOException {
        for (FlinkProcess tm : cluster.liveTaskManagers()) {
            if (tm.ringAddress().equals(holder)) {
                Files.delete(cluster.storeDirectory(tm.name()).resolve(key));
                return;
            }
        }
        throw new AssertionError("no TaskManager at " + holder);
    }

    /** {@code bin/sr3} with the backend jar as SR3_JAR, the test class path as SR3_CLASSPATH and FLINK_CONF_DIR. */
    private Result script(String confDir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", Path.of("..", "bin", "sr3").toString()));
        command.addAll(Arrays.asList(args));
        Path stdout = Files.createTempFile(tempDir, "script", ".out");
        Path stderr = Files.createTempFile(tempDir, "script", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
        builder.environment().remove("FLINK_HOME");
        builder.environment().remove("SR3_TRANSPORT_SECRET");
        builder.environment().put("SR3_JAR", backendJar().toString());
        builder.environment().put("SR3_CLASSPATH", System.getProperty("surefire.test.class.path",
                System.getProperty("java.class.path")));
        builder.environment().put("FLINK_CONF_DIR", confDir);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("SR3_JAVA_OPTS", "-Xmx256m -Djava.io.tmpdir="
                + Files.createDirectories(tempDir.resolve("admin-tmp")));
        Process process = builder.start();
        if (!process.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            throw new AssertionError("bin/sr3 " + String.join(" ", args) + " did not finish within " + COMMAND_TIMEOUT);
        }
        Result result = new Result(process.exitValue(), Files.readString(stdout, StandardCharsets.UTF_8),
                Files.readString(stderr, StandardCharsets.UTF_8));
        System.out.println("[admin] bin/sr3 " + String.join(" ", args) + " -> " + result);
        return result;
    }

    private Result admin(String... args) throws Exception {
        return run(List.of(ProcessLauncher.classpath()), args);
    }

    private Result run(List<String> classpath, String... args) throws Exception {
        Path logConfig = tempDir.resolve("admin-log4j2.properties");
        Files.writeString(logConfig, String.join("\n", "rootLogger.level = WARN",
                "rootLogger.appenderRef.err.ref = Err", "appender.err.name = Err", "appender.err.type = Console",
                "appender.err.target = SYSTEM_ERR", "appender.err.layout.type = PatternLayout",
                "appender.err.layout.pattern = %-5p %c{1} - %m%n", ""));
        List<String> command = new ArrayList<>(List.of(ProcessLauncher.javaBinary(),
                "-Xmx256m", "-Djava.io.tmpdir=" + Files.createDirectories(tempDir.resolve("admin-tmp")),
                "-Dlog4j2.configurationFile=" + logConfig.toUri()));
        command.addAll(ProcessLauncher.JAVA_OPENS);
        command.addAll(List.of("-cp", String.join(File.pathSeparator, classpath), Sr3Admin.class.getName()));
        command.addAll(Arrays.asList(args));
        Path stdout = Files.createTempFile(tempDir, "admin", ".out");
        Path stderr = Files.createTempFile(tempDir, "admin", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
        builder.environment().remove("SR3_TRANSPORT_SECRET");
        Process process = builder.start();
        if (!process.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            throw new AssertionError("sr3 " + String.join(" ", args) + " did not finish within " + COMMAND_TIMEOUT
                    + ": " + Files.readString(stdout) + Files.readString(stderr));
        }
        Result result = new Result(process.exitValue(), Files.readString(stdout, StandardCharsets.UTF_8),
                Files.readString(stderr, StandardCharsets.UTF_8));
        System.out.println("[admin] sr3 " + String.join(" ", args) + " -> " + result);
        return result;
    }

    /** The shaded backend jar this module's tests run against (installed or freshly packaged). */
    private static Path backendJar() {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (String entry : classpath.split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (name.startsWith("flink-sr3-backend") && name.endsWith(".jar") && !name.startsWith("original-")) {
                return Path.of(entry);
            }
        }
        try (Stream<Path> files = Files.list(Path.of("..", "flink-sr3-backend", "target"))) {
            return files.filter(p -> p.getFileName().toString().matches("flink-sr3-backend-[^-]+.*(?<!-tests)\\.jar"))
                    .findFirst().orElseThrow(() -> new AssertionError("no backend jar; run mvn install first"));
        } catch (IOException e) {
            throw new AssertionError("no backend jar on " + classpath, e);
        }
    }
}
