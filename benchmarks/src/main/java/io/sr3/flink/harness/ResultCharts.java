package io.sr3.flink.harness;

import io.sr3.flink.harness.SvgBarChart.Series;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import javax.annotation.concurrent.Immutable;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bar charts of each benchmark's results JSON, recognised by the JSON's shape (its fields, not
 * its file name, so a renamed or older result still plots): process recovery, backend comparison,
 * pacing, restore structures, transport security, replication, and JMH results. Pure functions of the JSON.
 */
final class ResultCharts {

    /** One recognised result shape: the test on a JSON root, and its charts. */
    @Immutable
    private record Shape(String kind, Predicate<JsonNode> recognises, Function<Context, List<SvgBarChart>> charts) {}

    /** A JSON root with the result's base name, for the subtitles. */
    private record Context(String name, JsonNode root) {}

    private static final List<Shape> SHAPES = List.of(
            new Shape("process-recovery", r -> r.path("summary").path("killToCaughtUpMillis").isObject(),
                    ResultCharts::processRecovery),
            new Shape("backend-comparison", r -> r.path("summary").path("checkpointEndToEndMillisMedian").isObject(),
                    ResultCharts::backendComparison),
            new Shape("pacing", r -> r.path("runs").path(0).has("setup") && r.path("runs").path(0).has("recoveryMillis"),
                    ResultCharts::pacing),
            new Shape("restore-structures", r -> r.path("cases").path(0).path("medianSeconds").isObject(),
                    ResultCharts::restoreStructures),
            new Shape("transport-security", r -> r.path("runs").path(0).has("mode") && r.path("runs").path(0).has("writeMBps"),
                    ResultCharts::transportSecurity),
            new Shape("replication", r -> r.path("results").path(0).has("failureCostProtected") && r.path("arms").isArray(),
                    ResultCharts::replication),
            new Shape("jmh", r -> r.isArray() && r.path(0).path("primaryMetric").has("score"), ResultCharts::jmh));

    /** The JMH parameter whose values are compared side by side: baseline and candidate, or the file systems. */
    private static final List<String> JMH_SERIES_PARAMETERS = List.of("path", "target");

    /** Display names of the backends the benchmarks compare; others keep their id. */
    private static final Map<String, String> BACKEND_NAMES =
            Map.of("rocksdb-file", "RocksDB on file://", "rocksdb-hdfs", "RocksDB on HDFS",
                    "flink-sr3-rf1", "flink-sr3, rf 1");

    private static final Pattern LEADING_NUMBER = Pattern.compile("^\\s*(\\d+(?:\\.\\d+)?)");

    private ResultCharts() {}

    /**
     * The charts of one result, top to bottom, or empty when its shape is none of the known ones.
     *
     * @throws IllegalArgumentException when the shape is known but its data cannot be drawn (e.g. no runs)
     */
    static Optional<List<SvgBarChart>> of(String name, JsonNode root) {
        for (Shape shape : SHAPES) {
            if (shape.recognises().test(root)) {
                return Optional.of(shape.charts().apply(new Context(name, root)));
            }
        }
        return Optional.empty();
    }

    /** The headline: kill to RUNNING, to caught up, the longest restore and to the first checkpoint, per backend. */
    private static List<SvgBarChart> processRecovery(Context c) {
        Map<String, String> measures = labels("killToRunningMillis", "kill → all tasks RUNNING",
                "killToCaughtUpMillis", "kill → caught up", "longestSubtaskRestoreMillis", "longest subtask restore",
                "killToFirstCheckpointMillis", "kill → first checkpoint");
        JsonNode summary = c.root().path("summary");
        List<Series> series = new ArrayList<>();
        for (String backend : backends(c.root())) {
            List<Double> values = new ArrayList<>();
            for (String key : measures.keySet()) {
                double median = number(summary.path(key).path(backend).path("median"));
                values.add((Double.isNaN(median) ? medianOfRuns(c.root(), "backend", backend, key) : median) / 1000);
            }
            series.add(new Series(backendName(backend), values));
        }
        JsonNode parameters = c.root().path("parameters");
        double stateBytes = leadingNumber(parameters.path("stateBytes"));
        String detail = (Double.isNaN(stateBytes) ? "" : Stats.bytes(stateBytes) + " of state, ")
                + "median of " + parameters.path("rounds").asText("?") + " rounds";
        return List.of(SvgBarChart.of("Recovery after a TaskManager SIGKILL (lower is better)",
                subtitle(c, detail), "seconds", List.copyOf(measures.values()), series));
    }

    /** Checkpoint and task-failure restore times per backend, and throughput in a second chart. */
    private static List<SvgBarChart> backendComparison(Context c) {
        Map<String, String> times = labels("checkpointEndToEndMillisMedian", "checkpoint p50",
                "checkpointEndToEndMillisP99", "checkpoint p99", "failureToRunningMillis", "task failure → all RUNNING",
                "longestTaskRestoreMillis", "its longest subtask restore",
                "taskManagerLossToRunningMillis", "TaskManager loss → all RUNNING",
                "taskManagerLossLongestTaskRestoreMillis", "its longest subtask restore");
        JsonNode summary = c.root().path("summary");
        List<String> backends = backends(c.root());
        List<Series> timeSeries = new ArrayList<>();
        List<Series> rateSeries = new ArrayList<>();
        for (String backend : backends) {
            timeSeries.add(new Series(backendName(backend),
                    times.keySet().stream().map(k -> number(summary.path(k).path(backend))).toList()));
            rateSeries.add(new Series(backendName(backend),
                    List.of(number(summary.path("throughputRecordsPerSecond").path(backend)))));
        }
        String detail = "mean of " + c.root().path("parameters").path("rounds").asText("?")
                + " rounds, checkpoint durations pooled";
        List<SvgBarChart> charts = new ArrayList<>(List.of(
                SvgBarChart.of("Checkpoints and restores (lower is better)", subtitle(c, detail),
                        "milliseconds", List.copyOf(times.values()), timeSeries),
                SvgBarChart.of("Throughput, rate-unlimited source, steady window (higher is better)", subtitle(c, detail),
                        "records per second", List.of("throughput"), rateSeries).withHeight(300)));
        JsonNode cpu = summary.path("cpuSecondsPerCheckpointedGiBByThreadGroup");
        if (cpu.isObject() && cpu.size() > 0) {
            List<String> groups = new ArrayList<>();
            cpu.fieldNames().forEachRemaining(groups::add);
            List<Series> cpuSeries = new ArrayList<>();
            for (String backend : backends) {
                cpuSeries.add(new Series(backendName(backend),
                        groups.stream().map(g -> number(cpu.path(g).path(backend))).toList()));
            }
            charts.add(SvgBarChart.of("CPU per checkpointed GiB by thread group (lower is better)", subtitle(c, detail),
                    "CPU-seconds per GiB", groups, cpuSeries));
        }
        return charts;
    }

    /**
     * One chart per benchmark method of a JMH result (flink-benchmarks style): a bar per value of
     * the compared parameter ({@link #JMH_SERIES_PARAMETERS}; a single series without one), a
     * category per combination of the other parameters, the score in JMH's unit.
     */
    private static List<SvgBarChart> jmh(Context c) {
        Map<String, List<JsonNode>> byMethod = new LinkedHashMap<>();
        for (JsonNode result : c.root()) {
            String benchmark = result.path("benchmark").asText("?");
            byMethod.computeIfAbsent(benchmark.substring(benchmark.lastIndexOf('.') + 1), m -> new ArrayList<>()).add(result);
        }
        List<SvgBarChart> charts = new ArrayList<>();
        byMethod.forEach((method, results) -> {
            Set<String> seriesNames = new LinkedHashSet<>();
            Set<String> categories = new LinkedHashSet<>();
            Map<String, Double> scores = new LinkedHashMap<>();
            for (JsonNode result : results) {
                String series = "score";
                List<String> others = new ArrayList<>();
                for (Map.Entry<String, JsonNode> param : iterable(result.path("params"))) {
                    if (JMH_SERIES_PARAMETERS.contains(param.getKey())) {
                        series = param.getValue().asText();
                    } else {
                        others.add(param.getKey() + " " + param.getValue().asText());
                    }
                }
                String category = others.isEmpty() ? method : String.join(", ", others);
                seriesNames.add(series);
                categories.add(category);
                scores.put(series + "\n" + category, number(result.path("primaryMetric").path("score")));
            }
            List<Series> series = new ArrayList<>();
            for (String name : seriesNames) {
                series.add(new Series(name, categories.stream()
                        .map(category -> scores.getOrDefault(name + "\n" + category, Double.NaN)).toList()));
            }
            String unit = results.get(0).path("primaryMetric").path("scoreUnit").asText("");
            String mode = results.get(0).path("mode").asText("");
            String better = unit.endsWith("/op") ? "lower is better" : "higher is better";
            charts.add(SvgBarChart.of(method + " (" + better + ")", subtitle(c, "JMH, mode " + mode), unit,
                    List.copyOf(categories), series));
        });
        return charts;
    }

    private static Iterable<Map.Entry<String, JsonNode>> iterable(JsonNode object) {
        return object::fields;
    }

    /** Per setup: the highest p99 over its rounds and its longest recovery, against the recovery bound. */
    private static List<SvgBarChart> pacing(Context c) {
        Map<String, List<JsonNode>> bySetup = groupBy(c.root().path("runs"), "setup");
        List<String> categories = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        List<Double> recovery = new ArrayList<>();
        Set<String> rounds = new LinkedHashSet<>();
        bySetup.forEach((setup, runs) -> {
            double highestP99 = Double.NaN;
            double longest = Double.NaN;
            int neverCaughtUp = 0;
            for (JsonNode run : runs) {
                rounds.add(run.path("round").asText());
                highestP99 = max(highestP99, number(run.path("p99Millis")));
                for (JsonNode r : run.path("recoveryMillis")) {
                    if (r.asDouble() < 0) {
                        neverCaughtUp++; // the benchmark's NOT_CAUGHT_UP marker
                    } else {
                        longest = max(longest, r.asDouble());
                    }
                }
            }
            categories.add(neverCaughtUp == 0 ? setup : setup + " (" + neverCaughtUp + " never caught up)");
            p99.add(highestP99 / 1000);
            recovery.add(longest / 1000);
        });
        SvgBarChart chart = SvgBarChart.of("Checkpoint pacer vs fixed intervals (lower is better)",
                subtitle(c, "bursty job with injected failures, " + rounds.size() + " rounds"), "seconds", categories,
                List.of(new Series("p99 latency (highest over the rounds)", p99),
                        new Series("longest recovery (failure → caught up)", recovery)));
        double bound = leadingNumber(c.root().path("parameters").path("bound"));
        return List.of(Double.isNaN(bound) ? chart
                : chart.withReference(bound / 1000,
                "recovery bound " + BigDecimal.valueOf(bound / 1000).stripTrailingZeros().toPlainString() + " s"));
    }

    /** Median restore time of star, line, tree and auto per scenario; one chart per base state size. */
    private static List<SvgBarChart> restoreStructures(Context c) {
        Map<Double, List<JsonNode>> byBaseSize = new LinkedHashMap<>();
        Set<String> structures = new LinkedHashSet<>();
        for (JsonNode kase : c.root().path("cases")) {
            double factor = c.root().path("scenarios").path(kase.path("scenario").asText()).path("sizeFactor").asDouble(1);
            byBaseSize.computeIfAbsent(kase.path("stateBytes").asDouble() / factor, b -> new ArrayList<>()).add(kase);
            kase.path("medianSeconds").fieldNames().forEachRemaining(structures::add);
        }
        List<SvgBarChart> charts = new ArrayList<>();
        byBaseSize.forEach((base, cases) -> {
            List<String> categories = cases.stream()
                    .map(k -> k.path("scenario").asText() + ", " + Stats.bytes(k.path("stateBytes").asDouble())).toList();
            List<Series> series = structures.stream().map(s -> new Series(s,
                    cases.stream().map(k -> number(k.path("medianSeconds").path(s))).toList())).toList();
            charts.add(new SvgBarChart("Restore time by structure, base state " + Stats.bytes(base) + " (lower is better)",
                    subtitle(c, "auto = the planner's choice"), "seconds (median)", categories, series, List.of(),
                    SvgBarChart.DEFAULT_WIDTH, 380));
        });
        return charts;
    }

    /** Ring throughput and CPU per MiB by connection security. */
    private static List<SvgBarChart> transportSecurity(Context c) {
        Map<String, List<JsonNode>> byMode = groupBy(c.root().path("runs"), "mode");
        List<String> modes = List.copyOf(byMode.keySet());
        JsonNode root = c.root();
        String detail = String.format(Locale.ROOT, "%s blocks of %s, %s in flight, median of %s rounds",
                root.path("blocks").asText("?"), Stats.bytes(root.path("blockBytes").asDouble(Double.NaN)),
                root.path("inFlight").asText("?"), root.path("rounds").asText("?"));
        return List.of(
                SvgBarChart.of("Ring block throughput by connection security (higher is better)", subtitle(c, detail),
                        "MB/s", modes, List.of(medians("write", byMode, "writeMBps"), medians("read", byMode, "readMBps"))),
                SvgBarChart.of("CPU per MiB moved (lower is better)", subtitle(c, detail), "CPU ms per MiB", modes,
                        List.of(medians("write", byMode, "writeCpuMsPerMiB"), medians("read", byMode, "readCpuMsPerMiB")))
                        .withHeight(360));
    }

    /** Per failure scenario and replication arm: the failure cost protected, and how often the whole job survived. */
    private static List<SvgBarChart> replication(Context c) {
        Map<String, List<JsonNode>> byScenario = groupBy(c.root().path("results"), "scenario");
        List<String> scenarios = List.copyOf(byScenario.keySet());
        List<Series> protectedCost = new ArrayList<>();
        List<Series> survived = new ArrayList<>();
        for (JsonNode arm : c.root().path("arms")) {
            String id = arm.path("id").asText();
            String label = arm.path("description").asText(id);
            protectedCost.add(new Series(label, percentOfArm(byScenario, id, "failureCostProtected")));
            survived.add(new Series(label, percentOfArm(byScenario, id, "survivedFraction")));
        }
        String detail = c.root().path("parameters").path("trialsPerScenario").asText("?")
                + " seeded failures per scenario (placement-level)";
        return List.of(
                SvgBarChart.of("Failure cost protected, by replication policy (higher is better)", subtitle(c, detail),
                        "% of failure cost protected", scenarios, protectedCost),
                SvgBarChart.of("Whole job survived (higher is better)", subtitle(c, detail), "% of trials", scenarios,
                        survived));
    }

    private static List<Double> percentOfArm(Map<String, List<JsonNode>> byScenario, String arm, String field) {
        List<Double> values = new ArrayList<>();
        byScenario.forEach((scenario, results) -> values.add(results.stream().filter(r -> r.path("arm").asText().equals(arm))
                .findFirst().map(r -> 100 * number(r.path(field))).orElse(Double.NaN)));
        return values;
    }

    private static Series medians(String name, Map<String, List<JsonNode>> groups, String field) {
        List<Double> values = new ArrayList<>();
        groups.forEach((group, runs) -> values.add(Stats.of(present(runs, field)).median()));
        return new Series(name, values);
    }

    private static double medianOfRuns(JsonNode root, String groupField, String group, String field) {
        return Stats.of(present(groupBy(root.path("runs"), groupField).getOrDefault(group, List.of()), field)).median();
    }

    /** The numeric values of {@code field} in {@code nodes}, leaving out those where it is missing or null. */
    private static List<Double> present(List<JsonNode> nodes, String field) {
        return nodes.stream().map(n -> number(n.path(field))).filter(v -> !Double.isNaN(v)).toList();
    }

    /** JSON field names and their category labels, in the order given: key, label, key, label, ... */
    private static Map<String, String> labels(String... keysAndLabels) {
        if (keysAndLabels.length % 2 != 0) {
            throw new IllegalArgumentException("Keys and labels come in pairs, got " + keysAndLabels.length + " strings: "
                    + String.join(", ", keysAndLabels));
        }
        Map<String, String> labels = new LinkedHashMap<>();
        for (int i = 0; i < keysAndLabels.length; i += 2) {
            labels.put(keysAndLabels[i], keysAndLabels[i + 1]);
        }
        return labels;
    }

    /** The elements of a JSON array by the text of one of their fields, in order of first appearance. */
    private static Map<String, List<JsonNode>> groupBy(JsonNode array, String field) {
        Map<String, List<JsonNode>> groups = new LinkedHashMap<>();
        for (JsonNode element : array) {
            groups.computeIfAbsent(element.path(field).asText(), g -> new ArrayList<>()).add(element);
        }
        return groups;
    }

    /** The backends in the order of the runs. */
    private static List<String> backends(JsonNode root) {
        return List.copyOf(groupBy(root.path("runs"), "backend").keySet());
    }

    private static String backendName(String id) {
        return BACKEND_NAMES.getOrDefault(id, id);
    }

    /** "name · 2 cores, AMD EPYC · detail": which result, on what machine, how it was summarised. */
    private static String subtitle(Context c, String detail) {
        JsonNode machine = c.root().path("machine");
        String where = machine.has("nproc") ? machine.path("nproc").asText() + " cores, " + machine.path("cpuModel").asText("?")
                + " · " : "";
        return c.name() + " · " + where + detail;
    }

    private static double number(JsonNode node) {
        return node.isNumber() ? node.asDouble() : Double.NaN;
    }

    /** The number a text starts with ("8000 ms", "268435456 (256.0 MiB ...)"), or NaN. */
    private static double leadingNumber(JsonNode node) {
        if (node.isNumber()) {
            return node.asDouble();
        }
        Matcher m = LEADING_NUMBER.matcher(node.asText(""));
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    private static double max(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    }
}
