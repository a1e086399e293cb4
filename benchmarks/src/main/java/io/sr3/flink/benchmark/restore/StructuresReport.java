package io.sr3.flink.benchmark.restore;

import io.sr3.flink.harness.Json;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.ResultFiles;
import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.harness.Stats;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The result files of the restore-structures benchmark: the bar, one table per scenario and
 * size, what the probe measured, every run; as {@code restore-structures-<date>-<commit>.md},
 * {@code .json} and {@code .svg}.
 *
 * @param command how the benchmark was run
 * @param machine where
 * @param loopbackBytesPerSecond one plain TCP stream over 127.0.0.1, measured in the same run
 * @param parameters the settings every case shares
 * @param cases every scenario at every size, in the order they ran
 * @param seconds the whole benchmark's wall time
 */
public record StructuresReport(String command, MachineDescription machine, double loopbackBytesPerSecond,
        Map<String, Object> parameters, List<CaseResult> cases, double seconds) {

    /** Every case: auto within {@link CaseResult#AUTO_BAR} of the best forced structure. */
    public boolean barMet() {
        return cases.stream().allMatch(CaseResult::autoWithinBar);
    }

    /** Median of |actual - predicted| / actual over every run of every case. */
    public double medianPredictionError() {
        List<Double> errors = new ArrayList<>();
        cases.forEach(c -> c.runs().forEach(r -> errors.add(r.report().predictionError())));
        return Stats.of(errors.stream().filter(e -> !e.isNaN()).toList()).median();
    }

    /** Star's throughput on {@code lan} over the loopback stream, per state size. */
    public Map<String, Double> lanStarOverLoopback() {
        Map<String, Double> fractions = new LinkedHashMap<>();
        cases.stream().filter(c -> c.scenario().name().equals("lan")).forEach(c ->
                fractions.put(Stats.bytes(c.stateBytes()), c.stateBytes() / c.seconds("star") / loopbackBytesPerSecond));
        return fractions;
    }

    /** The bar, in lines as printed and written. */
    public List<String> barLines() {
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "BAR %s: auto within 10%% of the best structure in every scenario and size",
                barMet() ? "MET" : "NOT MET"));
        for (CaseResult c : cases) {
            lines.add(String.format(Locale.ROOT, "  %-11s %8s: winner %-4s; auto chose %-10s auto/best %.2f %s", c.scenario().name(),
                    Stats.bytes(c.stateBytes()), c.winner(), c.autoChoice() + ",", c.autoRatio(), c.autoWithinBar() ? "ok" : "MISSED"));
        }
        Map<String, String> variants = new LinkedHashMap<>();
        variants.put(CaseResult.UNPROBED, "without a probe (links learned from ordinary transfers and the holders' LINKS reports):");
        variants.put(CaseResult.LIGHT_PROBE, "with one sweep of the light periodic probe instead (each link, then the inbound port):");
        variants.forEach((label, title) -> {
            lines.add(title);
            for (CaseResult c : cases) {
                lines.add(String.format(Locale.ROOT, "  %-11s %8s: winner %-4s; auto chose %-10s auto/best %.2f %s",
                        c.scenario().name(), Stats.bytes(c.stateBytes()), c.winner(), c.choice(label) + ",", c.ratio(label),
                        c.ratio(label) <= CaseResult.AUTO_BAR ? "ok" : "MISSED"));
            }
        });
        lines.add(String.format(Locale.ROOT, "  median prediction error over all %d runs: %.0f%%",
                cases.stream().mapToInt(c -> c.runs().size()).sum(), 100 * medianPredictionError()));
        lanStarOverLoopback().forEach((size, f) -> lines.add(String.format(Locale.ROOT,
                "  star on lan (%s): %.0f MB/s = %.0f%% of one loopback TCP stream (%.0f MB/s)", size,
                f * loopbackBytesPerSecond / 1e6, 100 * f, loopbackBytesPerSecond / 1e6)));
        return lines;
    }

    /** Writes the JSON, its SVG plot and the Markdown that embeds it; returns the Markdown and JSON files. */
    public List<Path> write(Path directory) throws IOException {
        Files.createDirectories(directory);
        String base = ResultFiles.newBaseName(directory, "restore-structures");
        Path jsonFile = directory.resolve(base + ".json");
        Path mdFile = directory.resolve(base + ".md");
        Files.writeString(jsonFile, Json.write(rounded(toMap())), StandardCharsets.UTF_8);
        String plot = ResultPlots.writeAndEmbed(jsonFile, "Median restore time of star, line, tree and auto per scenario");
        Files.writeString(mdFile, markdown(jsonFile.getFileName().toString(), plot), StandardCharsets.UTF_8);
        return List.of(mdFile, jsonFile);
    }

    private Map<String, Object> toMap() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", "io.sr3.flink.benchmark.RestoreStructuresBenchmark");
        json.put("measuredAtUtc", Instant.now().toString());
        json.put("command", command);
        json.put("machine", machine.toMap());
        json.put("loopbackTcpMBps", loopbackBytesPerSecond / 1e6);
        json.put("parameters", parameters);
        Map<String, Object> scenarios = new LinkedHashMap<>();
        cases.stream().map(CaseResult::scenario).distinct().forEach(s -> scenarios.put(s.name(), s.toMap()));
        json.put("scenarios", scenarios);
        Map<String, Object> bar = new LinkedHashMap<>();
        bar.put("autoWithin10PercentEverywhere", barMet());
        Map<String, Object> winners = new LinkedHashMap<>();
        cases.forEach(c -> winners.put(c.scenario().name() + "/" + Stats.bytes(c.stateBytes()), c.winner()));
        bar.put("winners", winners);
        bar.put("medianPredictionError", medianPredictionError());
        bar.put("lanStarOverLoopback", lanStarOverLoopback());
        json.put("bar", bar);
        json.put("cases", cases.stream().map(CaseResult::toMap).toList());
        json.put("wallSeconds", seconds);
        return json;
    }

    private String markdown(String jsonName, String plot) {
        StringBuilder md = new StringBuilder();
        md.append("# Restore structures: star, line, tree and auto over shaped loopback\n\n");
        md.append("Measured ").append(Instant.now().toString(), 0, 19).append(" UTC by `io.sr3.flink.benchmark.RestoreStructuresBenchmark` in ")
                .append(String.format(Locale.ROOT, "%.0f s", seconds)).append("; raw numbers in `").append(jsonName).append("`.\n\n");
        md.append("Command (from the repository root):\n\n```\n").append(command).append("\n```\n\n");
        md.append("## Bar\n\n```\n");
        barLines().forEach(l -> md.append(l).append('\n'));
        md.append("```\n\n## Machine\n\n");
        machine.toMap().forEach((k, v) -> md.append("- ").append(k).append(": `").append(v).append("`\n"));
        md.append(String.format(Locale.ROOT, "- loopback TCP, one stream (java.nio, 1 MiB writes, after a warm-up): %.0f MB/s\n\n",
                loopbackBytesPerSecond / 1e6));
        md.append("## Setup\n\n");
        parameters.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\n## Scenarios\n\n| scenario | network | meaning | tuned |\n|---|---|---|---|\n");
        cases.stream().map(CaseResult::scenario).distinct().forEach(s -> md.append("| ").append(s.name()).append(" | ")
                .append(s.describe()).append(" | ").append(s.meaning()).append(" | ")
                .append(s.tuning().isEmpty() ? "as briefed" : s.tuning()).append(" |\n"));
        md.append("\n## Results (median seconds; 64 MiB-class cases ran five times, 1 GiB-class once)\n\n");
        md.append(plot);
        md.append("| scenario | state | star | line | tree | auto | auto chose | auto/best | winner | predicted star / line / tree "
                        + "| auto, no probe | chose | /best | auto, light probe | chose | /best |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (CaseResult c : cases) {
            Map<String, Double> predicted = c.predicted();
            md.append(String.format(Locale.ROOT,
                    "| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %.2f%s | %s | %s / %s / %s | %.2f | %s | %.2f | %.2f | %s | %.2f |\n",
                    c.scenario().name(), Stats.bytes(c.stateBytes()), c.seconds("star"), c.seconds("line"), c.seconds("tree"),
                    c.seconds("auto"), c.autoChoice(), c.autoRatio(), c.autoWithinBar() ? "" : " (missed)", c.winner(),
                    fmt(predicted.get("star")), fmt(predicted.get("line")), fmt(predicted.get("tree")),
                    c.seconds(CaseResult.UNPROBED), c.choice(CaseResult.UNPROBED), c.ratio(CaseResult.UNPROBED),
                    c.seconds(CaseResult.LIGHT_PROBE), c.choice(CaseResult.LIGHT_PROBE), c.ratio(CaseResult.LIGHT_PROBE)));
        }
        md.append("\n## What the probe measured (from the recovering node, before the restores)\n\n| scenario | state | measured |\n|---|---|---|\n");
        cases.forEach(c -> md.append("| ").append(c.scenario().name()).append(" | ").append(Stats.bytes(c.stateBytes()))
                .append(" | ").append(c.probeLine()).append(" |\n"));
        md.append("\n## Runs\n\n| scenario | state | rep | requested | executed | predicted s | actual s | error | MB/s | R's link estimate after, MB/s |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|\n");
        for (CaseResult c : cases) {
            for (RestoreRun r : c.runs()) {
                md.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %.2f | %.2f | %.0f%% | %.0f | %.0f |\n",
                        c.scenario().name(), Stats.bytes(c.stateBytes()), r.repetition(), r.label(),
                        RestoreRun.label(r.report().structure()), r.report().predicted(), r.actualSeconds(),
                        100 * r.report().predictionError(), r.report().bytes() / r.actualSeconds() / 1e6,
                        r.learnedMedianLinkBytesPerSecond() / 1e6));
            }
        }
        md.append("\nauto, no probe: a fresh R that ran no probe: before it restores it reads two blocks from every "
                + "holder, and every holder has read two blocks from each of its replica neighbours, as reads and "
                + "re-replication would; the restore then asks the holders for the links they measured (LINKS). "
                + "Nothing tells it its inbound capacity or incast loss. auto, light probe: the same, after one sweep "
                + "of the light periodic probe (sr3.restore.probe-interval: every holder's link to R, then R's inbound "
                + "port with 1..4 holders streaming at once).\n");
        md.append("\nR's link estimate after: the median link to R in R's NetworkView once the restore is done. Each run's R "
                + "starts from the probe's numbers; the executor then folds what each first hop delivered during the restore "
                + "into them (moving average, weight 0.3).\n");
        return md.toString();
    }

    /**
     * Every double rounded to 4 decimals: {@link Json} prints a double that is not integral but
     * rounds to one (1.00001) as "1.", which is not JSON; rounded first, it prints as "1".
     */
    static Object rounded(Object value) {
        if (value instanceof Double d) {
            return Double.isFinite(d) ? Math.round(d * 1e4) / 1e4 : d;
        }
        if (value instanceof Map<?, ?> map) {
            Map<Object, Object> copy = new LinkedHashMap<>();
            map.forEach((k, v) -> copy.put(k, rounded(v)));
            return copy;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(StructuresReport::rounded).toList();
        }
        return value;
    }

    private static String fmt(Double seconds) {
        return seconds == null ? "-" : String.format(Locale.ROOT, "%.2f", seconds);
    }
}
