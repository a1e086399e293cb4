package io.sr3.flink.node;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.Sr3RingNodeMain;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The command line of {@link Sr3RingNodeMain} (here, next to the {@link SeedMembershipTest} that
 * runs it as a process): options as {@code key=value}, the secret from a file or the environment
 * and never from the command line.
 */
class Sr3RingNodeMainTest {

    private static final String SECRET = Sr3Options.TRANSPORT_SECRET.key();

    @TempDir Path dir;

    @Test
    void optionsArePassedAsKeyValue() throws Exception {
        Configuration config = Sr3RingNodeMain.configuration(List.of("sr3.ring.port=6130", "sr3.ring.seeds=a:1;b:2"), Map.of());
        assertThat(config.toMap()).containsEntry("sr3.ring.port", "6130").containsEntry("sr3.ring.seeds", "a:1;b:2");
        assertThat(config.getOptional(Sr3Options.TRANSPORT_SECRET)).isEmpty();
    }

    @Test
    void aSecretOnTheCommandLineIsRefusedSayingHowToPassIt() {
        for (List<String> args : List.of(List.of("--secret", "s3cret"), List.of("--secret=s3cret"),
                List.of("sr3.ring.port=6130", SECRET + "=s3cret"))) {
            assertThatThrownBy(() -> Sr3RingNodeMain.configuration(args, Map.of()))
                    .as("arguments %s", args)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--secret-file")
                    .hasMessageContaining(Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE)
                    .hasMessageNotContaining("s3cret");
        }
    }

    @Test
    void theSecretIsReadFromAFileWithoutItsTrailingLineBreak() throws Exception {
        Path file = Files.writeString(dir.resolve("secret"), "s3cret\n");
        Configuration config = Sr3RingNodeMain.configuration(List.of("--secret-file", file.toString(), "sr3.ring.port=1"),
                Map.of());
        assertThat(config.get(Sr3Options.TRANSPORT_SECRET)).isEqualTo("s3cret");
        Configuration joined = Sr3RingNodeMain.configuration(List.of("--secret-file=" + file), Map.of());
        assertThat(joined.get(Sr3Options.TRANSPORT_SECRET)).isEqualTo("s3cret");
    }

    @Test
    void theSecretIsReadFromTheEnvironment() throws Exception {
        Configuration config = Sr3RingNodeMain.configuration(List.of("sr3.ring.port=1"),
                Map.of(Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE, "from-env"));
        assertThat(config.get(Sr3Options.TRANSPORT_SECRET)).isEqualTo("from-env");
    }

    @Test
    void aSecretGivenTwiceEmptyOrMissingIsRefused() throws Exception {
        Path file = Files.writeString(dir.resolve("secret"), "s3cret");
        assertThatThrownBy(() -> Sr3RingNodeMain.configuration(List.of("--secret-file", file.toString()),
                        Map.of(Sr3RingNodeMain.SECRET_ENVIRONMENT_VARIABLE, "other")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("given twice");
        Path empty = Files.writeString(dir.resolve("empty"), "\n");
        assertThatThrownBy(() -> Sr3RingNodeMain.configuration(List.of("--secret-file", empty.toString()), Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is empty");
        assertThatThrownBy(() -> Sr3RingNodeMain.configuration(List.of("--secret-file"), Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs the path");
        assertThatThrownBy(() -> Sr3RingNodeMain.configuration(
                        List.of("--secret-file", dir.resolve("absent").toString()), Map.of()))
                .hasMessageContaining(dir.resolve("absent").toString())
                .hasCauseInstanceOf(NoSuchFileException.class);
    }
}
