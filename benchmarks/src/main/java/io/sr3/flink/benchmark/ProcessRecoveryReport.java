package io.sr3.flink.benchmark;

import io.sr3.flink.benchmark.ProcessRecoveryBenchmark.Backend;
import io.sr3.flink.harness.Json;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.ResultFiles;
import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.harness.Stats;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** Writes the Markdown, JSON and SVG results of {@link ProcessRecoveryBenchmark}: medians, min-max, ratios, every run. */
final class ProcessRecoveryReport {

    /** One reported measure of a run. */
    private record Measure(String key, String title, boolean bytesPerSecond, ToDoubleFunction<ProcessRecoveryRun> value) {}

    private static final List<Measure> MEASURES = List.of(
            new Measure("killToDetectedMillis", "kill -> loss noticed (a task left RUNNING)", false, r -> r.detected()),
            new Measure("killToRestartCreatedMillis", "kill -> new attempts CREATED (restart delay 500 ms included)", false,
                    r -> r.restartCreated()),
            new Measure("killToAllInitializingMillis", "kill -> every task deployed (last INITIALIZING)", false,
                    r -> r.allInitializing()),
            new Measure("longestSubtaskRestoreMillis", "longest subtask restore (INITIALIZING -> RUNNING)", false,
                    r -> r.longestRestoreMillis()),
            new Measure("killToRunningMillis", "kill -> all tasks RUNNING", false, r -> r.running()),
            new Measure("killToCaughtUpMillis", "**kill -> caught up** (lag <= " + ProcessRecoveryBenchmark.CAUGHT_UP_LAG_MILLIS
                    + " ms)", false, r -> r.caughtUp()),
            new Measure("killToFirstCheckpointMillis", "kill -> first checkpoint after the restore", false,
                    r -> r.firstCheckpoint()),
            new Measure("restoredBytesPerSecond", "restored bytes per second (state size / longest subtask restore)", true,
                    r -> r.restoredBytesPerSecond()));

    private ProcessRecoveryReport() {}

    /** Writes the JSON, its plot and the Markdown that embeds the plot; returns the Markdown and the JSON path. */
    static Path[] write(Path directory, MachineDescription machine, List<ProcessRecoveryRun> runs, double minutes)
            throws Exception {
        Files.createDirectories(directory);
        String base = ResultFiles.newBaseName(directory, "process-recovery");
        Map<String, Object> parameters = parameters(minutes);
        Map<String, Map<String, Stats>> stats = new LinkedHashMap<>();
        for (Backend backend : Backend.values()) {
            Map<String, Stats> byMeasure = new LinkedHashMap<>();
            for (Measure m : MEASURES) {
                List<Double> values = new ArrayList<>();
                for (ProcessRecoveryRun run : runs) {
                    if (run.backend().equals(backend.label)) {
                        values.add(m.value().applyAsDouble(run));
                    }
                }
                byMeasure.put(m.key(), Stats.of(values));
            }
            stats.put(backend.label, byMeasure);
        }

        Map<String, Object> summary = new LinkedHashMap<>();
        StringBuilder table = new StringBuilder("| measure | flink-sr3 | rocksdb-file | rocksdb-hdfs | sr3 / file:// | sr3 / HDFS |\n"
                + "|---|---:|---:|---:|---:|---:|\n");
        for (Measure m : MEASURES) {
            Map<String, Object> row = new LinkedHashMap<>();
            table.append("| ").append(m.title());
            for (Backend backend : Backend.values()) {
                Stats s = stats.get(backend.label).get(m.key());
                row.put(backend.label, Map.of("median", s.median(), "min", s.min(), "max", s.max()));
                table.append(" | ").append(format(m, s.median())).append(" (").append(format(m, s.min())).append("-")
                        .append(format(m, s.max())).append(")");
            }
            double sr3 = stats.get(Backend.SR3.label).get(m.key()).median();
            double file = sr3 / stats.get(Backend.FILE.label).get(m.key()).median();
            double hdfs = sr3 / stats.get(Backend.HDFS.label).get(m.key()).median();
            row.put("sr3OverFile", file);
            row.put("sr3OverHdfs", hdfs);
            table.append(String.format(" | %.2f | %.2f |\n", file, hdfs));
            summary.put(m.key(), row);
        }
        double caughtUpFile = (double) ((Map<?, ?>) summary.get("killToCaughtUpMillis")).get("sr3OverFile");
        double caughtUpHdfs = (double) ((Map<?, ?>) summary.get("killToCaughtUpMillis")).get("sr3OverHdfs");
        String bar = String.format("kill -> caught up: sr3 / file:// %.2f (bar <= 1.0: %s), sr3 / HDFS %.2f (bar <= 0.5: %s), "
                + "at %s of state (the bar is set at 1 GiB)", caughtUpFile, caughtUpFile <= 1.0 ? "met" : "not met", caughtUpHdfs,
                caughtUpHdfs <= 0.5 ? "met" : "not met", Stats.bytes(ProcessRecoveryBenchmark.STATE_BYTES));
        summary.put("bar", bar);

        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", ProcessRecoveryBenchmark.class.getName());
        json.put("measuredAtUtc", Instant.now().toString());
        json.put("command", ProcessRecoveryBenchmark.COMMAND);
        json.put("machine", machine.toMap());
        json.put("parameters", parameters);
        json.put("summary", summary);
        json.put("runs", runs.stream().map(ProcessRecoveryRun::toMap).toList());
        Path jsonFile = directory.resolve(base + ".json");
        Files.writeString(jsonFile, Json.write(json), StandardCharsets.UTF_8);
        String plot = ResultPlots.writeAndEmbed(jsonFile, "Recovery after a TaskManager SIGKILL, median seconds per backend");

        StringBuilder md = new StringBuilder();
        md.append("# Recovery after a TaskManager SIGKILL: flink-sr3 vs Flink RocksDB on file:// and on HDFS\n\n");
        md.append("Measured ").append(Instant.now().toString(), 0, 19).append(" UTC by `")
                .append(ProcessRecoveryBenchmark.class.getName()).append("`; raw numbers in `").append(jsonFile.getFileName())
                .append("`.\n\nCommand (from the repository root, after `mvn -B -q install -DskipTests`):\n\n```\n")
                .append(ProcessRecoveryBenchmark.COMMAND).append("\n```\n\n## Machine\n\n");
        machine.toMap().forEach((k, v) -> md.append("- ").append(k).append(": `").append(v).append("`\n"));
        md.append("\nThe machine is shared (other builds ran at the same time) and every process of a run (JobManager, "
                + "4 TaskManagers, for HDFS the NameNode and 3 DataNodes in the benchmark JVM) shares its 2 cores, so "
                + "absolute numbers are noisy; runs alternate A/B/C so that drift hits all sides.\n\n## Setup\n\n");
        parameters.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\n## Results\n\n").append(plot).append("Median (min-max) over the rounds; ratios of the medians.\n\n")
                .append(table)
                .append("\nThe bar: ").append(bar).append(".\n\n## Runs\n\n")
                .append("| round | backend | state | fill | lag at kill | detected | deployed | longest restore | RUNNING "
                        + "| caught up | 1st checkpoint | restored/s | sr3 restore log |\n"
                        + "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (ProcessRecoveryRun r : runs) {
            md.append(String.format("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s/s | %s |\n", r.round(),
                    r.backend(), Stats.bytes(r.stateSizeBytes()), Stats.millis(r.fillMillis()),
                    Stats.millis(r.lagBeforeKillMillis()), Stats.millis(r.detected()), Stats.millis(r.allInitializing()),
                    Stats.millis(r.longestRestoreMillis()), Stats.millis(r.running()), Stats.millis(r.caughtUp()),
                    Stats.millis(r.firstCheckpoint()), Stats.bytes(r.restoredBytesPerSecond()), sr3Cell(r)));
        }
        Path mdFile = directory.resolve(base + ".md");
        Files.writeString(mdFile, md.toString(), StandardCharsets.UTF_8);
        return new Path[] {mdFile, jsonFile};
    }

    private static String sr3Cell(ProcessRecoveryRun r) {
        Map<String, Object> s = r.sr3Restore();
        if (s.isEmpty()) {
            return "-";
        }
        return String.format("%s lines, %s (%s of %s blocks local), %s; longest predicted %.2f s, actual %.2f s",
                s.get("lines"), Stats.bytes(((Number) s.get("bytes")).doubleValue()), s.get("localBlocks"), s.get("blocks"),
                s.get("structures"), (double) s.get("predictedSecondsOfLongest"), (double) s.get("longestActualSeconds"));
    }

    private static String format(Measure m, double value) {
        return m.bytesPerSecond() ? Stats.bytes(value) + "/s" : Stats.millis(value);
    }

    private static Map<String, Object> parameters(double minutes) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("rounds", ProcessRecoveryBenchmark.ROUNDS);
        p.put("order", "A/B/C in every round: flink-sr3, rocksdb-file, rocksdb-hdfs; a fresh cluster per run");
        p.put("wallMinutes", String.format("%.1f", minutes));
        p.put("cluster", "JobManager + " + ProcessRecoveryBenchmark.TASK_MANAGERS + " TaskManagers as separate JVMs on "
                + "127.0.0.1, 1 slot each, job parallelism " + ProcessRecoveryBenchmark.PARALLELISM + " (one spare slot; "
                + "source parallelism 1); a replacement TaskManager starts right after the kill");
        for (Backend backend : Backend.values()) {
            p.put(backend.label, backend.description);
        }
        p.put("stateBytes", ProcessRecoveryBenchmark.STATE_BYTES + " (" + Stats.bytes(ProcessRecoveryBenchmark.STATE_BYTES)
                + ": " + ProcessRecoveryBenchmark.KEYS + " keys x " + ProcessRecoveryBenchmark.SLOTS + " slots x "
                + ProcessRecoveryBenchmark.PAYLOAD_BYTES + " B payload)");
        p.put("input", String.format("a schedule from the job's submission on: %,d fill records due at %.0f/s (faster than "
                + "the job: a backlog), then %.0f records/s; a restarted source reads what is due at full speed",
                ProcessRecoveryBenchmark.FILL_RECORDS, ProcessRecoveryBenchmark.FILL_RATE,
                ProcessRecoveryBenchmark.STEADY_RATE));
        p.put("kill", "once the keyed operator has processed the fill, is within the caught-up lag and a checkpoint "
                + "triggered after that has completed: SIGKILL of the first TaskManager running tasks of the job");
        p.put("checkpointIntervalMillis", ProcessRecoveryBenchmark.INTERVAL.toMillis());
        p.put("heartbeat", "interval 1 s, timeout 5 s; restart fixed-delay 500 ms");
        p.put("slots", "for every backend " + ProcessRecoveryBenchmark.STICKY_SLOTS + ": restarted subtasks go back "
                + "to their previous slots where those survived; no local backup copies, so no backend restores from one");
        p.put("ringFailureDetector", "interval 250 ms, timeout 2 s (flink-sr3)");
        p.put("replicaRepair", "sr3.repair.delay and sr3.repair.interval at their defaults ("
                + ProcessRecoveryBenchmark.REPAIR_DELAY + ", " + ProcessRecoveryBenchmark.REPAIR_INTERVAL
                + "), as a user runs them: the lost TaskManager's replicas are re-created after the measured recovery, "
                + "not competing with it (the test clusters repair at once)");
        p.put("caughtUp", "the first REST poll (20 ms) after all tasks RUNNING at which the keyed operator's processing "
                + "lag is <= " + ProcessRecoveryBenchmark.CAUGHT_UP_LAG_MILLIS + " ms: lag = now - the due time of the last "
                + "record it processed, from its input watermark (the minimum over its subtasks; event time of record i "
                + "is i ms), watermarks every 200 ms, metrics.fetcher.update-interval " + WatermarkLag.FETCH_INTERVAL_MILLIS
                + " ms; the backlog of the recovery is then processed");
        p.put("restoredBytesPerSecond", "for every backend: state_size of the restored checkpoint (Flink's checkpoint "
                + "statistics, all 3 subtasks, every subtask of the region restarts and downloads its state; no local "
                + "recovery) over the longest subtask INITIALIZING -> RUNNING (Flink's task timestamps). For flink-sr3 the "
                + "ring's restore log lines of the surviving and the replacement TaskManagers are summed as well");
        p.put("otherMeasures", "kill -> loss noticed: first REST poll at which a task left RUNNING; kill -> CREATED and "
                + "-> last INITIALIZING: the current attempts' state timestamps (JobManager clock, same host)");
        return p;
    }
}
