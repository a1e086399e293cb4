package io.sr3.flink.benchmark;

import io.sr3.flink.benchmark.ShapedClusterRestoreBenchmark.ShapedScenario;
import io.sr3.flink.benchmark.ShapedClusterRestoreBenchmark.Trial;
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
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes the Markdown, JSON and SVG results of {@link ShapedClusterRestoreBenchmark}: per scenario
 * the median restore time of each strategy, what {@code auto} chose and its ratio to the fastest
 * forced structure, and every trial with its log line.
 */
final class ShapedClusterReport {

    private static final double WITHIN = 1.10;

    private ShapedClusterReport() {}

    static Path[] write(Path directory, MachineDescription machine, List<Trial> trials, Map<String, String> failures,
            double wallSeconds) throws Exception {
        Files.createDirectories(directory);
        String base = ResultFiles.newBaseName(directory, "shaped-cluster-restore");
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("benchmark", "shaped-cluster-restore");
        root.put("measuredAtUtc", Instant.now().toString());
        root.put("command", ShapedClusterRestoreBenchmark.COMMAND);
        root.put("machine", machine.toMap());
        Map<String, Object> parameters = new LinkedHashMap<>();
        parameters.put("parallelism", "one subtask per TaskManager (see each scenario)");
        parameters.put("replicationFactor", ShapedClusterRestoreBenchmark.REPLICATION);
        parameters.put("stateBytes", ShapedClusterRestoreBenchmark.STATE_BYTES);
        parameters.put("rounds", ShapedClusterRestoreBenchmark.ROUNDS);
        parameters.put("probeInterval", String.valueOf(ShapedClusterRestoreBenchmark.probeInterval()));
        root.put("parameters", parameters);
        Map<String, Object> scenarios = new LinkedHashMap<>();
        for (ShapedScenario s : ShapedClusterRestoreBenchmark.ALL) {
            scenarios.put(s.name(), s.toMap());
        }
        root.put("scenarios", scenarios);

        StringBuilder table = new StringBuilder("| scenario | restored (median) | auto | star | line | tree | auto chose "
                + "| auto / best forced |\n|---|---:|---:|---:|---:|---:|---|---:|\n");
        List<Map<String, Object>> cases = new ArrayList<>();
        for (ShapedScenario s : ShapedClusterRestoreBenchmark.ALL) {
            List<Trial> of = trials.stream().filter(t -> t.scenario().equals(s.name())).toList();
            if (of.isEmpty()) {
                continue;
            }
            Map<String, Double> medians = new LinkedHashMap<>();
            if (ShapedClusterRestoreBenchmark.STRATEGIES.stream().anyMatch(st -> of.stream().noneMatch(t -> t.strategy().equals(st)))) {
                continue; // a scenario that failed before every strategy ran once: its trials are listed below
            }
            for (String strategy : ShapedClusterRestoreBenchmark.STRATEGIES) {
                List<Double> seconds = of.stream().filter(t -> t.strategy().equals(strategy)).map(Trial::actualSeconds).toList();
                medians.put(strategy, seconds.isEmpty() ? Double.NaN : Stats.of(seconds).median());
            }
            String winner = null;
            for (String forced : List.of("star", "line", "tree")) {
                if (!medians.get(forced).isNaN() && (winner == null || medians.get(forced) < medians.get(winner))) {
                    winner = forced;
                }
            }
            double autoOverBest = medians.get("auto") / medians.get(winner);
            Map<String, Integer> chose = new TreeMap<>();
            of.stream().filter(t -> t.strategy().equals("auto")).forEach(t -> chose.merge(t.structure(), 1, Integer::sum));
            double bytes = Stats.of(of.stream().map(t -> (double) t.bytes()).toList()).median();
            Map<String, Object> kase = new LinkedHashMap<>();
            kase.put("scenario", s.name());
            kase.put("stateBytes", ShapedClusterRestoreBenchmark.STATE_BYTES);
            kase.put("restoredBytesMedian", bytes);
            kase.put("medianSeconds", medians);
            kase.put("autoChose", chose);
            kase.put("winner", winner);
            kase.put("autoOverBest", autoOverBest);
            kase.put("autoWithin10Percent", autoOverBest <= WITHIN);
            kase.put("trials", of.stream().map(Trial::toMap).toList());
            cases.add(kase);
            table.append(String.format(Locale.ROOT, "| %s | %s | %.2f s | %.2f s | %.2f s | %.2f s | %s | **%.2f**%s |\n",
                    s.name(), Stats.bytes(bytes), medians.get("auto"), medians.get("star"), medians.get("line"),
                    medians.get("tree"), chose, autoOverBest, autoOverBest <= WITHIN ? " (within 10%)" : ""));
        }
        root.put("cases", cases);
        root.put("failures", failures);
        root.put("wallSeconds", wallSeconds);

        Path json = directory.resolve(base + ".json");
        Files.writeString(json, Json.write(root), StandardCharsets.UTF_8);
        StringBuilder md = new StringBuilder("# Restore structures on a shaped multi-process cluster (" + base + ")\n\n");
        md.append(ResultPlots.writeAndEmbed(json, "restore time by structure on the shaped cluster"));
        md.append("Command: `").append(ShapedClusterRestoreBenchmark.COMMAND).append("` (as root: network namespaces). ")
                .append(String.format(Locale.ROOT, "%.1f minutes. ", wallSeconds / 60))
                .append("JobManager + 4 or 5 TaskManagers (separate JVMs, each TaskManager in its own network namespace on "
                        + "one bridge, links shaped by the kernel's HTB), replication factor 3, one subtask per TaskManager, ")
                .append(Stats.bytes(ShapedClusterRestoreBenchmark.STATE_BYTES))
                .append(" of keyed RocksDB state. tm1 is SIGKILLed and started again in its namespace with an empty store "
                        + "and `sr3.restore.strategy` set to each value in turn (round 1: "
                        + String.join(", ", ShapedClusterRestoreBenchmark.order(1)) + "; round 2: "
                        + String.join(", ", ShapedClusterRestoreBenchmark.order(2)) + "); the time is its subtask's restore as its "
                        + "restore log line reports it (first request to last block). Probe: ")
                .append(ShapedClusterRestoreBenchmark.probeInterval() == null ? "none (auto knows what checkpoint traffic taught "
                        + "the nodes)" : "`sr3.restore.probe-interval: " + ShapedClusterRestoreBenchmark.probeInterval() + "`")
                .append(".\n\n");
        for (ShapedScenario s : ShapedClusterRestoreBenchmark.ALL) {
            md.append("- **").append(s.name()).append("**: ").append(s.meaning()).append('\n');
        }
        md.append("\nMedian restore time of tm1's subtask by strategy:\n\n").append(table).append('\n');
        failures.forEach((scenario, failure) -> md.append("**").append(scenario).append(" failed**: ").append(failure)
                .append("\n\n"));
        md.append("Every trial (auto's log line shows its predictions and the source of every estimate):\n\n");
        for (Trial t : trials) {
            md.append(String.format(Locale.ROOT, "- %s round %d, %s: %.2f s by %s, predicted %.2f s. `%s`\n", t.scenario(),
                    t.round(), t.strategy(), t.actualSeconds(), t.structure(), t.predictedSeconds(), t.line()));
        }
        md.append("\nMachine: ").append(machine).append('\n');
        Path markdown = directory.resolve(base + ".md");
        Files.writeString(markdown, md.toString(), StandardCharsets.UTF_8);
        return new Path[] {markdown, json};
    }
}
