package io.sr3.flink.benchmark;

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

/**
 * Writes the results of {@link BackendComparisonBenchmark} as Markdown, JSON and an SVG plot, side by side: each
 * flink-sr3 variant against each RocksDB baseline, as ratios.
 */
final class ComparisonReport {

    /** The result files' name before the date, e.g. {@code backend-comparison-256m}. */
    private final String kind;
    private final MachineDescription machine;
    private final String command;
    private final Map<String, Object> parameters;
    private final List<String> backends;
    private final List<RunResult> runs;
    private final ZonedDateTime when = ZonedDateTime.now(ZoneOffset.UTC);

    ComparisonReport(String kind, MachineDescription machine, String command, Map<String, Object> parameters, List<String> backends,
            List<RunResult> runs) {
        this.kind = kind;
        this.machine = machine;
        this.command = command;
        this.parameters = parameters;
        this.backends = backends;
        this.runs = runs;
    }

    private List<String> candidates() {
        return backends.stream().filter(b -> b.startsWith("flink-sr3")).toList();
    }

    private List<String> baselines() {
        return backends.stream().filter(b -> !b.startsWith("flink-sr3")).toList();
    }

    /** "flink-sr3/rocksdb-file" for every candidate and baseline. */
    private List<String[]> ratioPairs() {
        List<String[]> pairs = new ArrayList<>();
        for (String c : candidates()) {
            for (String b : baselines()) {
                pairs.add(new String[] {c, b});
            }
        }
        return pairs;
    }

    List<Path> write(Path directory) throws IOException {
        Files.createDirectories(directory);
        String base = ResultFiles.newBaseName(directory, kind);
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
        for (String[] pair : ratioPairs()) {
            out.append(" ratio ").append(pair[0]).append('/').append(pair[1]).append(" |");
            rule.append("---:|");
        }
        out.append('\n').append(rule).append('\n');
        for (ComparisonMetric m : ComparisonMetric.all()) {
            out.append("| ").append(m.title()).append(" |");
            for (String backend : backends) {
                out.append(' ').append(m.format(m.pooled().applyAsDouble(of(backend)))).append(" |");
            }
            for (String[] pair : ratioPairs()) {
                out.append(' ').append(String.format("%.2f", ratio(m, pair))).append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    private double ratio(ComparisonMetric m, String[] pair) {
        return m.pooled().applyAsDouble(of(pair[0])) / m.pooled().applyAsDouble(of(pair[1]));
    }

    /**
     * The ratio of a metric for one pair within each round, in round order: the runs of a round
     * ran one after the other, so drift of the shared machine hits both sides of each ratio alike,
     * and the spread shows how far one round's ratio can be trusted.
     */
    private List<Double> roundRatios(ComparisonMetric m, String[] pair) {
        List<Double> ratios = new ArrayList<>();
        for (int round : runs.stream().mapToInt(RunResult::round).distinct().sorted().toArray()) {
            List<RunResult> candidate = of(pair[0]).stream().filter(r -> r.round() == round).toList();
            List<RunResult> baseline = of(pair[1]).stream().filter(r -> r.round() == round).toList();
            if (!candidate.isEmpty() && !baseline.isEmpty()) {
                ratios.add(m.pooled().applyAsDouble(candidate) / m.pooled().applyAsDouble(baseline));
            }
        }
        return ratios;
    }

    /** Every metric's ratio per round for every pair (rows: metrics; columns: pairs; cells: round 1, round 2, ...). */
    String roundRatioTable() {
        StringBuilder out = new StringBuilder("| Metric |");
        StringBuilder rule = new StringBuilder("|---|");
        for (String[] pair : ratioPairs()) {
            out.append(' ').append(pair[0]).append('/').append(pair[1]).append(" |");
            rule.append("---:|");
        }
        out.append('\n').append(rule).append('\n');
        for (ComparisonMetric m : ComparisonMetric.all()) {
            out.append("| ").append(m.title()).append(" |");
            for (String[] pair : ratioPairs()) {
                out.append(' ').append(String.join(", ", roundRatios(m, pair).stream()
                        .map(r -> String.format("%.2f", r)).toList())).append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    /**
     * CPU-seconds per checkpointed GiB in the rate-limited window, per thread group (rows) and
     * backend (columns), mean over rounds: where each backend's checkpoint cost lands.
     */
    private Map<String, Map<String, Double>> cpuByGroup() {
        Map<String, Map<String, Double>> table = new LinkedHashMap<>();
        for (String backend : backends) {
            List<RunResult> rs = of(backend);
            for (RunResult r : rs) {
                r.cpu().secondsByGroup().forEach((group, seconds) -> table.computeIfAbsent(group, g -> new LinkedHashMap<>())
                        .merge(backend, r.cpu().perCheckpointedGiB(seconds) / rs.size(), Double::sum));
            }
        }
        return table;
    }

    private String cpuTable() {
        StringBuilder out = new StringBuilder("| Thread group |");
        StringBuilder rule = new StringBuilder("|---|");
        for (String backend : backends) {
            out.append(' ').append(backend).append(" |");
            rule.append("---:|");
        }
        out.append('\n').append(rule).append('\n');
        cpuByGroup().forEach((group, perBackend) -> {
            out.append("| ").append(group).append(" |");
            for (String backend : backends) {
                out.append(String.format(" %.1f |", perBackend.getOrDefault(backend, 0.0)));
            }
            out.append('\n');
        });
        out.append("| garbage collector, reported collection time (ms per checkpointed GiB) |");
        for (String backend : backends) {
            out.append(String.format(" %,.0f |", ComparisonMetric.mean(of(backend), r -> r.cpu().perCheckpointedGiB(r.cpu().gcPauseMillis()))));
        }
        return out.append('\n').toString();
    }

    private String markdown(String jsonName, String plot) {
        StringBuilder md = new StringBuilder();
        md.append("# Backend comparison: ").append(String.join(", ", candidates())).append(" vs ")
                .append(String.join(", ", baselines()))
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
        md.append("\nA ratio below 1 means flink-sr3 took less time or CPU (or, for throughput, processed fewer "
                + "records/s).\n");
        md.append("\n### The same ratios, round by round\n\n");
        md.append(roundRatioTable());
        md.append("\nThe backends run one after the other within a round; the spread between rounds is the ")
                .append("machine's noise for that ratio.\n");
        md.append("\n## Where the CPU goes: CPU-seconds per checkpointed GiB by thread group (rate-limited phase, ")
                .append("mean over rounds)\n\n");
        md.append(cpuTable());
        md.append("\nThe largest thread names of every run (digits as #) are in the JSON file ")
                .append("(`checkpointing.cpuSecondsByThreadName`).\n");
        md.append("\n## Per run\n\n");
        md.append("| Backend | Round | records/s steady | to FINISHED | checkpoints | ckpt median | ckpt mean | state size "
                + "| uploaded/ckpt | restored ckpt | task failure->running | task restore | TM loss->running "
                + "| task restore | results |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (RunResult r : runs) {
            md.append(String.format("| %s | %d | %,.0f | %,.0f | %d | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |%n",
                    r.backend(), r.round(), r.throughput().recordsPerSecond(), r.throughput().recordsPerSecondToFinished(),
                    r.fullStateCheckpoints().size(), Stats.millis(r.checkpointDurations().median()),
                    Stats.millis(r.checkpointDurations().mean()), Stats.bytes(r.checkpointStateSizes().median()),
                    Stats.bytes(r.checkpointedSizes().mean()), r.restoredCheckpointId(),
                    Stats.millis(r.taskFailure().toRunningMillis()), Stats.millis(r.taskFailure().longestTaskRestoreMillis()),
                    Stats.millis(r.taskManagerLoss().toRunningMillis()),
                    Stats.millis(r.taskManagerLoss().longestTaskRestoreMillis()), r.resultsExact() ? "exact" : "WRONG"));
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
        md.append("- Throughput: a rate-unlimited source, checkpointing every ").append(parameters.get("checkpointInterval"))
                .append("; the headline is the steady window (").append(parameters.get("steadyWindow")).append("); ")
                .append("\"to FINISHED\" divides all records by the time from the last subtask RUNNING to FINISHED, ")
                .append("which adds the end-of-input emission and the final checkpoint Flink waits for.\n");
        md.append("- Checkpoint duration and size: Flink's checkpoint statistics (`CheckpointStatsSnapshot` of the ")
                .append("execution graph): end-to-end duration (trigger to last acknowledgement), state size and ")
                .append("checkpointed (incremental) size, for the checkpoints of the rate-limited phase triggered ")
                .append("after every key's state existed and before the failure.\n");
        md.append("- Task failure: one failure thrown by the job's failure injector (armed by the benchmark) after ")
                .append("checkpoints; the failure time is the FAILED timestamp of the failing subtask attempt, ")
                .append("\"running\" is the latest RUNNING timestamp of the new attempts (RUNNING follows ")
                .append("INITIALIZING, where RocksDB downloads and opens its state). Includes the fixed restart delay ")
                .append("of 200 ms on both sides. The job's registry reports no per-record timestamps, so the first ")
                .append("record processed after the restore is not measured separately.\n");
        md.append("- TaskManager loss: ").append(parameters.get("taskManagerLoss")).append("; measured from the ")
                .append("close. Local recovery is off for every backend, so the restarted subtasks download their ")
                .append("state.\n");
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
                .append("for every backend, so the differences are what the checkpoints cost. By thread group: each ")
                .append("thread's user and system time from /proc/self/task (garbage collector and RocksDB threads ")
                .append("included), grouped by name; threads that ended in the window show as their own group.\n");
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
        for (ComparisonMetric metric : ComparisonMetric.all()) {
            Map<String, Object> s = new LinkedHashMap<>();
            for (String backend : backends) {
                s.put(backend, metric.pooled().applyAsDouble(of(backend)));
            }
            for (String[] pair : ratioPairs()) {
                s.put("ratio " + pair[0] + "/" + pair[1], ratio(metric, pair));
                s.put("ratio " + pair[0] + "/" + pair[1] + " per round", roundRatios(metric, pair));
            }
            s.put("higherIsBetter", metric.higherIsBetter());
            for (String backend : backends) {
                s.put(backend + "PerRun", of(backend).stream().map(r -> metric.perRun().applyAsDouble(r)).toList());
            }
            summary.put(metric.key(), s);
        }
        summary.put("cpuSecondsPerCheckpointedGiBByThreadGroup", cpuByGroup());
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

    private static String bytesList(long[] bytes) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < bytes.length; i++) {
            s.append(i == 0 ? "" : ", ").append("node-").append(i + 1).append(' ').append(Stats.bytes(bytes[i]));
        }
        return s.toString();
    }
}
