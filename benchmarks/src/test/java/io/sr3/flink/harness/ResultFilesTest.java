package io.sr3.flink.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/** Result names carry date and commit, and a second run of the same day and commit gets a new name. */
class ResultFilesTest {

    @TempDir Path results;

    @Test
    void aSecondRunNeverOverwritesTheFirstsMarkdownOrJson() throws Exception {
        String first = ResultFiles.newBaseName(results, "pacing");
        assertThat(first).startsWith("pacing-" + LocalDate.now(ZoneOffset.UTC) + "-")
                .endsWith(ResultFiles.commit());

        Files.writeString(results.resolve(first + ".md"), "first run");
        String second = ResultFiles.newBaseName(results, "pacing");
        assertThat(second).isEqualTo(first + "-2");

        Files.writeString(results.resolve(second + ".json"), "{}");
        assertThat(ResultFiles.newBaseName(results, "pacing")).isEqualTo(first + "-3");
    }
}
