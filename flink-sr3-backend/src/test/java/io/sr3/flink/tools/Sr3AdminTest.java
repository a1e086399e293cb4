package io.sr3.flink.tools;

import io.sr3.flink.fs.Sr3FileSystemFactory;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class Sr3AdminTest {

    private record Run(int code, String out, String err) {}

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Sr3Admin.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpListsEveryCommandAndNeedsNoRing() {
        for (String[] args : List.of(new String[0], new String[] {"--help"}, new String[] {"-h"}, new String[] {"help"})) {
            Run help = run(args);
            assertThat(help.code()).isZero();
            assertThat(help.out()).contains("Usage: sr3").contains("ring").contains("fsck").contains("--secret-file")
                    .contains("lib/");
        }
        for (String command : Sr3Admin.COMMAND_ORDER) {
            assertThat(run("help", command).out()).as("help of %s", command).isNotBlank();
        }
        assertThat(run("fsck", "--help", "sr3:///x").out()).as("--help after a command: its help, not a ring")
                .contains("sr3 fsck [--blocks] PATH");
    }

    @Test
    void usageErrorsExitWithTwoAndSayWhatIsWrong() {
        assertThat(run("frobnicate").err()).contains("Unknown command 'frobnicate'");
        assertThat(run("frobnicate").code()).isEqualTo(Sr3Admin.USAGE);
        assertThat(run("ls").err()).contains("'ls' takes 1 operand(s), got 0");
        assertThat(run("cp", "sr3:///a").err()).contains("'cp' takes 2 operand(s), got 1");
        assertThat(run("ls", "--blocks", "sr3:///a").err()).contains("Unknown option '--blocks' for 'ls'");
        assertThat(run("ring", "--seeds").err()).contains("--seeds needs a value");
        assertThat(run("ring", "--seeds", "a:1", "--seeds=b:1").err()).contains("--seeds is given twice");
        assertThat(run("ring", "-Dnovalue").err()).contains("-D needs key=value");
        assertThat(run("-R", "ls", "sr3:///").err()).contains("Unknown option '-R'").contains("follow the command");
        assertThat(run("--bogus", "ring").code()).isEqualTo(Sr3Admin.USAGE);
        AdminArguments parsed = AdminArguments.parse(List.of("-D", "sr3.ring.replication-factor=3",
                "-Dsr3.transport.request-timeout = 30 s", "fsck", "--blocks", "sr3:///x", "--seeds=a:1;b:2"));
        assertThat(parsed.properties()).containsEntry("sr3.ring.replication-factor", "3")
                .containsEntry("sr3.transport.request-timeout", "30 s");
        assertThat(parsed.command()).isEqualTo("fsck");
        assertThat(parsed.operands()).containsExactly("sr3:///x");
        assertThat(parsed.hasFlag("--blocks")).isTrue();
        assertThat(parsed.seeds()).isEqualTo("a:1;b:2");
    }

    @Test
    void secretsAreRefusedOnTheCommandLine() {
        for (String[] args : List.of(new String[] {"ring", "--secret", "x"}, new String[] {"ring", "--secret=x"},
                new String[] {"ring", "-Dsr3.transport.secret=x"},
                new String[] {"ring", "-Dsecurity.ssl.internal.keystore-password=x"},
                new String[] {"ring", "--truststore-password", "x"})) {
            Run refused = run(args);
            assertThat(refused.code()).as(String.join(" ", args)).isEqualTo(Sr3Admin.USAGE);
            assertThat(refused.err()).as(String.join(" ", args)).contains("Refusing").doesNotContain("=x");
        }
    }

    @Test
    void theClientConfigurationIsAStoragelessClientOnItsOwnScratchStore(@TempDir java.nio.file.Path dir)
            throws Exception {
        Files.writeString(dir.resolve("config.yaml"), String.join("\n",
                "sr3.ring.seeds: [tm-0.flink:6130, tm-1.flink:6130]",
                "sr3.ring.role: storage",
                "sr3.ring.port: 6130",
                "sr3.ring.host: tm-0.flink",
                "sr3.store.dir: /data/sr3",
                "sr3.transport.secret: from-the-file",
                "sr3.ring.replication-factor: 3", ""));
        Files.writeString(dir.resolve("secret"), "from-secret-file\n");
        AdminArguments arguments = AdminArguments.parse(List.of("--conf-dir", dir.toString(), "ring"));
        var scratch = dir.resolve("scratch");
        var config = io.sr3.flink.Sr3Options.nodeConfig(AdminConnection.configuration(arguments, Map.of(), scratch));
        assertThat(config.role()).isEqualTo(io.sr3.flink.node.RingRole.CLIENT);
        assertThat(config.ports()).containsExactly(0);
        assertThat(config.host()).isEqualTo("127.0.0.1");
        assertThat(config.storeDirectory()).isEqualTo(scratch);
        assertThat(config.seeds()).containsExactly("tm-0.flink:6130", "tm-1.flink:6130");
        assertThat(config.replicationFactor()).isEqualTo(3);
        assertThat(config.secret()).isEqualTo("from-the-file");

        AdminArguments withFile = AdminArguments.parse(List.of("--conf-dir", dir.toString(), "--secret-file",
                dir.resolve("secret").toString(), "--seeds", "10.0.0.1:6130", "ring"));
        var overridden = io.sr3.flink.Sr3Options.nodeConfig(AdminConnection.configuration(withFile, Map.of(), scratch));
        assertThat(overridden.secret()).isEqualTo("from-secret-file");
        assertThat(overridden.seeds()).containsExactly("10.0.0.1:6130");
        assertThatThrownBy(() -> AdminConnection.configuration(withFile,
                Map.of(AdminConnection.SECRET_VARIABLE, "also"), scratch))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("given twice");
        AdminArguments halfTls = AdminArguments.parse(List.of("--keystore", "/k.p12", "ring"));
        assertThatThrownBy(() -> AdminConnection.configuration(halfTls, Map.of(), scratch))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--truststore");
    }

    @Test
    void aCheckpointsFilesOutsideItKeepTheirPlacesRelativeToTheCopy() {
        Path chk = new Path("sr3:///ckpt/job1/chk-5");
        List<Path> outside = List.of(new Path("sr3:///ckpt/job1/shared/a"), new Path("sr3:///ckpt/job0/shared/b"));
        Path root = Copy.commonAncestor(chk, outside);
        assertThat(root.toUri().getPath()).isEqualTo("/ckpt");
        Path targetRoot = Copy.ancestor(new Path("file:///backup/ckpt/job1/chk-5"), 2);
        assertThat(targetRoot.toUri().getPath()).isEqualTo("/backup/ckpt");
        assertThat(Copy.relative(root, outside.get(1))).isEqualTo("job0/shared/b");
        assertThatThrownBy(() -> Copy.ancestor(new Path("file:///chk-5"), 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least that deep");
        assertThatThrownBy(() -> Copy.commonAncestor(chk, List.of(new Path("file:///elsewhere/x"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another file system");
        assertThat(CheckpointFiles.normalized(new Path("sr3:/a//b/")))
                .isEqualTo(CheckpointFiles.normalized(new Path(Sr3FileSystemFactory.SCHEME + ":///a/b")));
    }
}
