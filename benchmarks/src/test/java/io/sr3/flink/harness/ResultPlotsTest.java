package io.sr3.flink.harness;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Each known results JSON shape becomes an SVG of the same name with its numbers; anything else is skipped with one line. */
class ResultPlotsTest {

    private static final String MACHINE = "\"machine\": {\"nproc\": 2, \"cpuModel\": \"AMD EPYC\"}";

    @TempDir Path results;

    private final ByteArrayOutputStream skippedBytes = new ByteArrayOutputStream();
    private PrintStream skipped;

    @BeforeEach
    void captureSkips() {
        skipped = new PrintStream(skippedBytes, true, StandardCharsets.UTF_8);
    }

    private ParsedSvg plot(String name, String json) throws Exception {
        Path file = results.resolve(name + ".json");
        Files.writeString(file, json);
        assertThat(ResultPlots.write(file, skipped)).contains(results.resolve(name + ".svg"));
        assertThat(skippedBytes.toString(StandardCharsets.UTF_8)).isEmpty();
        return ParsedSvg.parse(Files.readString(results.resolve(name + ".svg")));
    }

    private static String recoveryMeasure(String key, double sr3, double file) {
        return "\"" + key + "\": {\"flink-sr3\": {\"median\": " + sr3 + "}, \"rocksdb-file\": {\"median\": " + file
                + "}, \"sr3OverFile\": 1}";
    }

    @Test
    void processRecoveryPlotsFourMediansPerBackendInSecondsAndFallsBackToTheRuns() throws Exception {
        ParsedSvg svg = plot("process-recovery-2026-12-02-abc1234", "{" + MACHINE + ", \"parameters\": {\"rounds\": 2, "
                + "\"stateBytes\": \"268435456 (256.0 MiB: 16384 keys)\"}, \"summary\": {"
                + recoveryMeasure("killToRunningMillis", 17907, 4966) + ", "
                + recoveryMeasure("killToCaughtUpMillis", 37635, 8013) + ", "
                + recoveryMeasure("longestSubtaskRestoreMillis", 7234.5, 1860) + "}, \"runs\": ["
                + "{\"backend\": \"flink-sr3\", \"killToFirstCheckpointMillis\": 25937},"
                + "{\"backend\": \"rocksdb-file\", \"killToFirstCheckpointMillis\": 5470},"
                + "{\"backend\": \"flink-sr3\", \"killToFirstCheckpointMillis\": 15804},"
                + "{\"backend\": \"rocksdb-file\"}]}");

        assertThat(svg.texts("legend-label")).containsExactly("flink-sr3", "RocksDB on file://");
        assertThat(svg.texts("category")).containsExactly("kill → all tasks RUNNING", "kill → caught up",
                "longest subtask restore", "kill → first checkpoint");
        assertThat(svg.texts("value")).containsExactly("17.9", "4.97", "37.6", "8.01", "7.23", "1.86", "20.9", "5.47");
        assertThat(svg.texts("subtitle")).containsExactly(
                "process-recovery-2026-12-02-abc1234 · 2 cores, AMD EPYC · 256.0 MiB of state, median of 2 rounds");
    }

    @Test
    void backendComparisonPlotsTimesThroughputAndCpuByThreadGroupAndMissingValuesAsNa() throws Exception {
        ParsedSvg svg = plot("backend-comparison-x", "{" + MACHINE + ", \"parameters\": {\"rounds\": 2}, \"summary\": {"
                + "\"throughputRecordsPerSecond\": {\"flink-sr3\": 24300.9, \"rocksdb-hdfs\": 20860.8, \"higherIsBetter\": true},"
                + "\"checkpointEndToEndMillisMedian\": {\"flink-sr3\": 326, \"rocksdb-hdfs\": 825.5},"
                + "\"checkpointEndToEndMillisP99\": {\"flink-sr3\": 1076, \"rocksdb-hdfs\": 1510},"
                + "\"failureToRunningMillis\": {\"flink-sr3\": 723.5, \"rocksdb-hdfs\": null},"
                + "\"cpuSecondsPerCheckpointedGiBByThreadGroup\": {\"garbage collector\": {\"flink-sr3\": 3.04, "
                + "\"rocksdb-hdfs\": 2.5}, \"flink-sr3 ring\": {\"flink-sr3\": 7.1}}},"
                + "\"runs\": [{\"backend\": \"flink-sr3\"}, {\"backend\": \"rocksdb-hdfs\"}]}");

        assertThat(svg.texts("title")).containsExactly("Checkpoints and restores (lower is better)",
                "Throughput, rate-unlimited source, steady window (higher is better)",
                "CPU per checkpointed GiB by thread group (lower is better)");
        assertThat(svg.texts("value")).containsExactly("326", "826", "1,076", "1,510", "724", "24,301", "20,861",
                "3.04", "2.50", "7.10");
        // HDFS task failure -> running, both backends' three absent restore measures, the ring's CPU on HDFS
        assertThat(svg.texts("missing")).hasSize(8);
        assertThat(svg.bars()).isEqualTo(10);
    }

    @Test
    void aJmhResultPlotsOneChartPerMethodWithTheComparedParameterAsSeries() throws Exception {
        ParsedSvg svg = plot("file-create-x", "["
                + jmhResult("createWriteClose", "\"fileBytes\": \"4096\", \"target\": \"file\"", 34.2)
                + "," + jmhResult("createWriteClose", "\"fileBytes\": \"4096\", \"target\": \"sr3-rf2\"", 4583)
                + "," + jmhResult("createWriteClose", "\"fileBytes\": \"1048576\", \"target\": \"file\"", 292)
                + "," + jmhResult("mkdirsOfANewDirectory", "\"target\": \"sr3-rf2\"", 3231) + "]");

        assertThat(svg.texts("title")).containsExactly("createWriteClose (lower is better)",
                "mkdirsOfANewDirectory (lower is better)");
        assertThat(svg.texts("legend-label")).containsExactly("file", "sr3-rf2", "sr3-rf2");
        assertThat(svg.texts("category")).containsExactly("fileBytes 4096", "fileBytes 1048576", "mkdirsOfANewDirectory");
        assertThat(svg.texts("value")).containsExactly("34.2", "4,583", "292", "3,231"); // by category
        assertThat(svg.texts("missing")).hasSize(1); // sr3-rf2 at 1 MiB was not measured
    }

    private static String jmhResult(String method, String params, double score) {
        return "{\"benchmark\": \"io.sr3.flink.benchmark.jmh.FileCreateBenchmark." + method + "\", \"mode\": \"avgt\", "
                + "\"params\": {" + params + "}, \"primaryMetric\": {\"score\": " + score + ", \"scoreUnit\": \"us/op\"}}";
    }

    @Test
    void pacingPlotsTheHighestP99AndLongestRecoveryPerSetupAgainstTheBound() throws Exception {
        ParsedSvg svg = plot("pacing-x", "{" + MACHINE + ", \"parameters\": {\"bound\": \"8000 ms\"}, \"runs\": ["
                + "{\"setup\": \"pacer (bound 8 s)\", \"round\": 1, \"recoveryMillis\": [895, 1857], \"p99Millis\": 1338},"
                + "{\"setup\": \"fixed 1 s\", \"round\": 1, \"recoveryMillis\": [461, 6818], \"p99Millis\": 2096},"
                + "{\"setup\": \"pacer (bound 8 s)\", \"round\": 2, \"recoveryMillis\": [764], \"p99Millis\": 992},"
                + "{\"setup\": \"fixed 1 s\", \"round\": 2, \"recoveryMillis\": [-1], \"p99Millis\": 2842}],"
                + "\"summary\": \"| table |\"}");

        assertThat(svg.texts("category")).containsExactly("pacer (bound 8 s)", "fixed 1 s (1 never caught up)");
        assertThat(svg.texts("value")).containsExactly("1.34", "1.86", "2.84", "6.82");
        assertThat(svg.texts("reference-label")).containsExactly("recovery bound 8 s");
        assertThat(svg.texts("subtitle")).singleElement().satisfies(s -> assertThat(s).endsWith("2 rounds"));
    }

    @Test
    void restoreStructuresPlotsOneChartPerBaseStateSize() throws Exception {
        ParsedSvg svg = plot("restore-structures-x", "{\"scenarios\": {\"lan\": {\"sizeFactor\": 1}, "
                + "\"large-state\": {\"sizeFactor\": 2}}, \"cases\": ["
                + "{\"scenario\": \"lan\", \"stateBytes\": 67108864, \"medianSeconds\": {\"star\": 0.1122, \"line\": 0.136, "
                + "\"tree\": 0.0845, \"auto\": 0.0854}},"
                + "{\"scenario\": \"lan\", \"stateBytes\": 1073741824, \"medianSeconds\": {\"star\": 1.4, \"line\": 1.73, "
                + "\"tree\": 1.06, \"auto\": 1.15}},"
                + "{\"scenario\": \"large-state\", \"stateBytes\": 134217728, \"medianSeconds\": {\"star\": 0.172, "
                + "\"line\": 0.69, \"tree\": 0.43, \"auto\": 0.173}}]}");

        assertThat(svg.texts("title")).containsExactly("Restore time by structure, base state 64.0 MiB (lower is better)",
                "Restore time by structure, base state 1.0 GiB (lower is better)");
        assertThat(svg.texts("legend-label")).containsExactly("star", "line", "tree", "auto", "star", "line", "tree", "auto");
        assertThat(svg.texts("category")).containsExactly("lan, 64.0 MiB", "large-state, 128.0 MiB", "lan, 1.0 GiB");
        assertThat(svg.bars()).isEqualTo(12);
    }

    @Test
    void transportSecurityPlotsMedianThroughputAndCpuPerMode() throws Exception {
        ParsedSvg svg = plot("transport-security-x", "{\"blocks\": 64, \"blockBytes\": 4194304, \"inFlight\": 4, "
                + "\"rounds\": 3, \"runs\": ["
                + "{\"mode\": \"plaintext\", \"writeMBps\": 233.6, \"readMBps\": 536.7, \"writeCpuMsPerMiB\": 8.2, \"readCpuMsPerMiB\": 3.7},"
                + "{\"mode\": \"tls\", \"writeMBps\": 97.8, \"readMBps\": 327.3, \"writeCpuMsPerMiB\": 20.7, \"readCpuMsPerMiB\": 6.2},"
                + "{\"mode\": \"plaintext\", \"writeMBps\": 294.7, \"readMBps\": 741.5, \"writeCpuMsPerMiB\": 6.3, \"readCpuMsPerMiB\": 2.7},"
                + "{\"mode\": \"tls\", \"writeMBps\": 210.6, \"readMBps\": 351.1, \"writeCpuMsPerMiB\": 9.6, \"readCpuMsPerMiB\": 5.9},"
                + "{\"mode\": \"plaintext\", \"writeMBps\": 338.0, \"readMBps\": 713.8, \"writeCpuMsPerMiB\": 5.6, \"readCpuMsPerMiB\": 2.8},"
                + "{\"mode\": \"tls\", \"writeMBps\": 255.2, \"readMBps\": 587.4, \"writeCpuMsPerMiB\": 7.5, \"readCpuMsPerMiB\": 3.2}]}");

        assertThat(svg.texts("category")).containsExactly("plaintext", "tls", "plaintext", "tls");
        assertThat(svg.texts("value")).containsExactly("295", "714", "211", "351", "6.30", "2.80", "9.60", "5.90");
        assertThat(svg.texts("subtitle")).first().isEqualTo(
                "transport-security-x · 64 blocks of 4.0 MiB, 4 in flight, median of 3 rounds");
    }

    @Test
    void replicationPlotsEachArmsProtectedCostAndSurvivalInPercent() throws Exception {
        ParsedSvg svg = plot("replication-x", "{" + MACHINE + ", \"parameters\": {\"trialsPerScenario\": 10000}, "
                + "\"arms\": [{\"id\": \"uniform-2\", \"description\": \"uniform rf 2\"}, "
                + "{\"id\": \"cost-aware-2.25\", \"description\": \"cost-aware, budget 2.25\"}], \"results\": ["
                + "{\"scenario\": \"nodes-2\", \"arm\": \"uniform-2\", \"failureCostProtected\": 0.5426, \"survivedFraction\": 0.1407},"
                + "{\"scenario\": \"nodes-2\", \"arm\": \"cost-aware-2.25\", \"failureCostProtected\": 0.9769, \"survivedFraction\": 0.1407},"
                + "{\"scenario\": \"nodes-3\", \"arm\": \"uniform-2\", \"failureCostProtected\": 0.1893, \"survivedFraction\": 0}]}");

        assertThat(svg.texts("legend-label")).containsExactly("uniform rf 2", "cost-aware, budget 2.25", "uniform rf 2",
                "cost-aware, budget 2.25");
        assertThat(svg.texts("value")).containsExactly("54.3", "97.7", "18.9", "14.1", "14.1", "0");
        assertThat(svg.texts("missing")).hasSize(2); // cost-aware has no nodes-3 result
    }

    @Test
    void theDirectoryRunWritesOneSvgPerKnownShapeAndSkipsTheRestWithOneLineEach() throws Exception {
        Files.writeString(results.resolve("pacing-a.json"), "{\"parameters\": {}, \"runs\": [{\"setup\": \"fixed 1 s\", "
                + "\"recoveryMillis\": [500], \"p99Millis\": 900}]}");
        Files.writeString(results.resolve("fault-soak-seed7.json"), "{\"seed\": 7, \"bytesLost\": 0}");
        Files.writeString(results.resolve("broken.json"), "{\"runs\": [");
        Files.writeString(results.resolve("pacing-empty.json"), "{\"runs\": []}");
        Files.writeString(results.resolve("pacing-a.md"), "# not JSON, not read");

        List<Path> written = ResultPlots.writeAll(results, skipped);

        assertThat(written).containsExactly(results.resolve("pacing-a.svg"));
        assertThat(skippedBytes.toString(StandardCharsets.UTF_8).lines()).satisfiesExactly(
                line -> assertThat(line).startsWith("[plots] skipped " + results.resolve("broken.json") + ": not readable as JSON"),
                line -> assertThat(line).isEqualTo("[plots] skipped " + results.resolve("fault-soak-seed7.json")
                        + ": not a result shape that ResultPlots knows"),
                line -> assertThat(line).isEqualTo("[plots] skipped " + results.resolve("pacing-empty.json")
                        + ": not a result shape that ResultPlots knows"));
        try (var files = Files.list(results)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".svg"))).containsExactly("pacing-a.svg");
        }
    }

    @Test
    void aKnownShapeWithNothingToDrawIsSkippedNamingTheReason() throws Exception {
        Path file = results.resolve("process-recovery-x.json");
        Files.writeString(file, "{\"summary\": {\"killToCaughtUpMillis\": {}}, \"runs\": []}");

        assertThat(ResultPlots.write(file, skipped)).isEmpty();
        assertThat(skippedBytes.toString(StandardCharsets.UTF_8)).isEqualTo("[plots] skipped " + file
                + ": a known shape with nothing to draw (Bar chart 'Recovery after a TaskManager SIGKILL (lower is better)' "
                + "has 0 series; it draws 1 to 8 (one palette colour each))" + System.lineSeparator());
        assertThat(results.resolve("process-recovery-x.svg")).doesNotExist();
    }

    @Test
    void aReportWriterGetsTheMarkdownThatEmbedsTheSvg() throws Exception {
        Path file = results.resolve("pacing-b.json");
        Files.writeString(file, "{\"runs\": [{\"setup\": \"fixed 1 s\", \"recoveryMillis\": [500], \"p99Millis\": 900}]}");

        assertThat(ResultPlots.writeAndEmbed(file, "p99 and recovery per setup"))
                .isEqualTo("![p99 and recovery per setup](pacing-b.svg)\n\n");
        assertThat(results.resolve("pacing-b.svg")).isNotEmptyFile();
    }
}
