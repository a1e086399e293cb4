package io.sr3.flink.benchmark;

import io.sr3.flink.harness.JobProbe.CheckpointRecord;
import io.sr3.flink.harness.Json;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.ResultFiles;
import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.harness.Stats;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Writes the results of {@link BackendComparisonBenchmark} as Markdown, JSON and an SVG plot, side by side: the
 * first backend (flink-sr3) against each of the others, as ratios.
 */
final class ComparisonReport {

    private final MachineDescription machine;
    private final String command;
    private final Map<String, Object> parameters;
    private final List<String> backends;
    private final List<RunResult> runs;
    private final ZonedDateTime when = ZonedDateTime.now(ZoneOffset.UTC);

    ComparisonReport(MachineDescription machine, String command, Map<String, Object> parameters, List<String> backends,
            List<RunResult> runs) {
        this.machine = machine;
        this.command = command;
        this.parameters = parameters;
        this.backends = backends;
        this.runs = runs;
    }

    private String candidate() {
        return backends.get(0);
    }

    private List<String> baselines() {
        return backends.subList(1, backends.size());
    }

    /** How a metric's values are printed. */
    private enum Unit { RATE, MILLIS, BYTES, CPU_SECONDS }

    /** One compared quantity: how to read it from a run, and whether higher is better. */
    private record Metric(String key, String title, boolean higherIsBetter, Unit unit,
            ToDoubleFunction<RunResult> perRun, ToDoubleFunction<List<RunResult>> pooled) {}

    private static List<Metric> metrics() {
        return List.of(
                new Metric("throughputRecordsPerSecond", "Throughput, rate-unlimited source (records/s)", true, Unit.RATE,
                        RunResult::recordsPerSecond, rs -> mean(rs, RunResult::recordsPerSecond)),
                new Metric("checkpointEndToEndMillisMedian", "Checkpoint duration, median end-to-end (ms)", false, Unit.MILLIS,
                        r -> r.checkpointDurations().median(), rs -> pooled(rs).median()),
                new Metric("checkpointEndToEndMillisP99", "Checkpoint duration, p99 end-to-end (ms)", false, Unit.MILLIS,
                        r -> r.checkpointDurations().p99(), rs -> pooled(rs).p99()),
                new Metric("checkpointEndToEndMillisMean", "Checkpoint duration, mean end-to-end (ms)", false, Unit.MILLIS,
                        r -> r.checkpointDurations().mean(), rs -> pooled(rs).mean()),
                new Metric("cpuSecondsPerCheckpointedGiB", "CPU-seconds per checkpointed GiB (whole JVM, rate-limited phase)",
                        false, Unit.CPU_SECONDS, RunResult::cpuSecondsPerCheckpointedGiB,
                        rs -> mean(rs, RunResult::cpuSecondsPerCheckpointedGiB)),
                new Metric("checkpointStateSizeBytesMedian", "Checkpoint state size, median (full incremental state)",
                        false, Unit.BYTES, r -> r.checkpointStateSizes().median(),
                        rs -> mean(rs, r -> r.checkpointStateSizes().median())),
                new Metric("checkpointedSizeBytesMean", "Uploaded per checkpoint, mean (incremental part)", false, Unit.BYTES,
                        r -> r.checkpointedSizes().mean(), rs -> mean(rs, r -> r.checkpointedSizes().mean())),
                new Metric("failureToRunningMillis", "Restore: failure -> all subtasks RUNNING (ms)", false, Unit.MILLIS,
                        RunResult::failureToRunningMillis, rs -> mean(rs, RunResult::failureToRunningMillis)),
                new Metric("longestTaskRestoreMillis", "Restore: longest subtask INITIALIZING (state download + open, ms)",
                        false, Unit.MILLIS, RunResult::longestTaskRestoreMillis,
                        rs -> mean(rs, RunResult::longestTaskRestoreMillis)),
                new Metric("failureToFirstCheckpointMillis", "Restore: failure -> first checkpoint completed after it (ms)",
                        false, Unit.MILLIS, RunResult::failureToFirstCheckpointMillis,
                        rs -> mean(rs, RunResult::failureToFirstCheckpointMillis)));
    }

    List<Path> write(Path directory) throws IOException {
        Files.createDirectories(directory);
        String base = ResultFiles.newBaseName(directory, "backend-comparison");
        Path md = directory.resolve(base + ".md");
        Path json = directory.resolve(base + ".json");
        Files.writeString(json, Json.write(jsonModel()), StandardCharsets.UTF_8);
        String plot = ResultPlots.writeAndEmbed(json, "Checkpoint and restore times, and throughput, per backend");
        Files.writeString(md, markdown(json.getFileName().toString(), plot), StandardCharsets.UTF_8);
        return List.of(md, json);
    }

    String summaryTable() {
        StringBuilder out = new StringBuilder("| Metric |");
        StringBuilder rule = new StringBuilder("|---|");
        for (String backend : backends) {
            out.append(' ').append(backend).append(" |");
            rule.append("---:|");
        }
        for (String baseline : baselines()) {
            out.append(" ratio ").append(candidate()).append('/').append(baseline).append(" |");
            rule.append("---:|");
        }
        out.append('\n').append(rule).append('\n');
        for (Metric m : metrics()) {
            double candidateValue = m.pooled().applyAsDouble(of(candidate()));
            out.append("| ").append(m.title()).append(" |");
            for (String backend : backends) {
                out.append(' ').append(format(m.pooled().applyAsDouble(of(backend)), m)).append(" |");
            }
            for (String baseline : baselines()) {
                out.append(' ').append(String.format("%.2f", candidateValue / m.pooled().applyAsDouble(of(baseline))))
                        .append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    private String markdown(String jsonName, String plot) {
        StringBuilder md = new StringBuilder();
        md.append("# Backend comparison: ").append(candidate()).append(" vs ").append(String.join(", ", baselines()))
                .append("\n\n");
        md.append("Measured ").append(when.toLocalDateTime().withNano(0)).append(" UTC by `")
                .append(BackendComparisonBenchmark.class.getName()).append("`; raw numbers in `").append(jsonName)
                .append("`.\n\n");
        md.append("Command (from the repository root, after `mvn -B -q install -DskipTests`):\n\n```\n").append(command)
                .append("\n```\n\n");
        md.append("## Machine\n\n");
        machine.toMap().forEach((k, v) -> md.append("- ").append(k).append(": `").append(v).append("`\n"));
        md.append("\nThe machine is shared (other builds ran at the same time), so absolute numbers are noisy; runs ")
                .append("alternate between the backends so that drift hits every side.\n\n");
        md.append("## Setup\n\n");
        parameters.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\n## Results (mean over rounds; checkpoint durations pooled over all full-state checkpoints)\n\n");
        md.append(plot);
        md.append(summaryTable());
        md.append("\nA ratio below 1 means ").append(candidate()).append(" took less time or CPU (or, for throughput, "
                + "processed fewer records/s).\n");
        md.append("\n## Per run\n\n");
        md.append("| Backend | Round | records/s | checkpoints | ckpt median | ckpt mean | state size | uploaded/ckpt "
                + "| restored ckpt | failure->running | task restore | failure->1st ckpt | results |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (RunResult r : runs) {
            md.append(String.format("| %s | %d | %,.0f | %d | %s | %s | %s | %s | %d | %s | %s | %s | %s |%n",
                    r.backend(), r.round(), r.recordsPerSecond(), r.fullStateCheckpoints().size(),
                    Stats.millis(r.checkpointDurations().median()), Stats.millis(r.checkpointDurations().mean()),
                    Stats.bytes(r.checkpointStateSizes().median()), Stats.bytes(r.checkpointedSizes().mean()),
                    r.restoredCheckpointId(), Stats.millis(r.failureToRunningMillis()),
                    Stats.millis(r.longestTaskRestoreMillis()), Stats.millis(r.failureToFirstCheckpointMillis()),
                    r.resultsExact() ? "exact" : "WRONG"));
        }
        md.append("\nEvery checkpoint of every run (id: end-to-end ms, state size, uploaded) is in the JSON file.\n");
        for (RunResult r : runs) {
            if (r.ringBytesPerNode().length > 0) {
                md.append(String.format("%n%s round %d: ring stores at the failure: %s; written to the ring in the run "
                                + "(all replicas): %s.%n", r.backend(), r.round(), bytesList(r.ringBytesPerNode()),
                        Stats.bytes(r.ringBytesWritten())));
            }
        }
        md.append("\n## How the numbers are taken\n\n");
        md.append("- Throughput: a rate-unlimited source; records divided by the time from the last subtask switching ")
                .append("to RUNNING to the job FINISHED (the end-of-input result emission included), checkpointing ")
                .append("every ").append(parameters.get("checkpointInterval")).append(".\n");
        md.append("- Checkpoint duration and size: Flink's checkpoint statistics (`CheckpointStatsSnapshot` of the ")
                .append("execution graph): end-to-end duration (trigger to last acknowledgement), state size and ")
                .append("checkpointed (incremental) size, for the checkpoints of the rate-limited phase triggered ")
                .append("after every key's state existed and before the failure.\n");
        md.append("- Restore: one failure thrown by the job's failure injector (armed by the benchmark) after ")
                .append("checkpoints; the failure time is the FAILED timestamp of the failing subtask attempt, ")
                .append("\"running\" is the latest RUNNING timestamp of the new attempts (RUNNING follows ")
                .append("INITIALIZING, where RocksDB downloads and opens its state). Includes the fixed restart delay ")
                .append("of 200 ms on both sides. The job's registry reports no per-record timestamps, so the first ")
                .append("record processed after the restore is not measured separately.\n");
        md.append("- Correctness: each phase's per-key results are compared with `StatefulTestJob.expectedResults`; ")
                .append("numbers of a run whose results are not exact are not comparable.\n");
        md.append("- Caveat: in one JVM the sr3:// file system of all TaskManagers is served by the oldest ring node, ")
                .append("which keeps the first replica of every block (writer first), so restores read mostly from ")
                .append("its local store, like `file://`; the second replica crosses loopback TCP on every write. ")
                .append("Multi-host effects (network bandwidth, a lost TaskManager taking its ring node along) are not ")
                .append("part of this benchmark; the demo shows the ring-node loss.\n");
        md.append("- HDFS (when it runs) is a MiniDFSCluster in the same JVM: a NameNode and three DataNodes on ")
                .append("loopback, sharing the cores with the job as the ring does; its blocks are replicated three ")
                .append("times, the ring's twice.\n");
        md.append("- CPU-seconds per checkpointed GiB: the JVM's CPU time (every thread, kernel time, the garbage ")
                .append("collector) in the rate-limited phase, from all subtasks RUNNING to the injected failure, over ")
                .append("the bytes the checkpoints completed in that window uploaded. The job's own work is the same ")
                .append("for every backend, so the differences are what the checkpoints cost.\n");
        return md.toString();
    }

    private Map<String, Object> jsonModel() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("benchmark", BackendComparisonBenchmark.class.getName());
        m.put("measuredAtUtc", when.toString());
        m.put("command", command);
        m.put("machine", machine.toMap());
        m.put("parameters", parameters);
        Map<String, Object> summary = new LinkedHashMap<>();
        for (Metric metric : metrics()) {
            Map<String, Object> s = new LinkedHashMap<>();
            double candidateValue = metric.pooled().applyAsDouble(of(candidate()));
            for (String backend : backends) {
                s.put(backend, metric.pooled().applyAsDouble(of(backend)));
            }
            for (String baseline : baselines()) {
                s.put("ratio " + candidate() + "/" + baseline, candidateValue / metric.pooled().applyAsDouble(of(baseline)));
            }
            s.put("higherIsBetter", metric.higherIsBetter());
            for (String backend : backends) {
                s.put(backend + "PerRun", of(backend).stream().map(r -> metric.perRun().applyAsDouble(r)).toList());
            }
            summary.put(metric.key(), s);
        }
        m.put("summary", summary);
        List<Map<String, Object>> raw = new ArrayList<>();
        for (RunResult r : runs) {
            raw.add(r.toMap());
        }
        m.put("runs", raw);
        return m;
    }

    private List<RunResult> of(String backend) {
        return runs.stream().filter(r -> r.backend().equals(backend)).toList();
    }

    private static double mean(List<RunResult> runs, ToDoubleFunction<RunResult> f) {
        return runs.stream().mapToDouble(f).average().orElse(Double.NaN);
    }

    private static Stats pooled(List<RunResult> runs) {
        List<Long> all = new ArrayList<>();
        for (RunResult r : runs) {
            for (CheckpointRecord c : r.fullStateCheckpoints()) {
                all.add(c.endToEndMillis());
            }
        }
        return Stats.of(all);
    }

    private static String format(double v, Metric m) {
        return switch (m.unit()) {
            case RATE -> String.format("%,.0f", v);
            case MILLIS -> String.format("%,.0f ms", v);
            case BYTES -> Stats.bytes(v);
            case CPU_SECONDS -> String.format("%.1f CPU-s/GiB", v);
        };
    }

    private static String bytesList(long[] bytes) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < bytes.length; i++) {
            s.append(i == 0 ? "" : ", ").append("node-").append(i + 1).append(' ').append(Stats.bytes(bytes[i]));
        }
        return s.toString();
    }
}
