package io.sr3.flink.benchmark.replication;

import io.sr3.flink.benchmark.replication.BenchmarkJob.CheckpointFile;
import io.sr3.flink.benchmark.replication.FailureTrials.Arm;
import io.sr3.flink.benchmark.replication.FailureTrials.Result;
import io.sr3.flink.benchmark.replication.FailureTrials.Scenario;
import io.sr3.flink.harness.Json;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.ResultFiles;
import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.replication.OperatorCost;
import io.sr3.flink.replication.OperatorProfile;
import io.sr3.flink.replication.ReplicaChoice;
import io.sr3.flink.replication.ReplicationPlan;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The result files of the replication benchmark, {@code replication-<date>-<commit>.md},
 * {@code .json} and {@code .svg}: the job and the plans, one table per failure scenario,
 * cost-aware over blind at the same storage, each operator's survival, and the assumptions.
 *
 * @param command how the benchmark was run
 * @param machine where
 * @param parameters the ring, the trials, the model's facts
 * @param costs each stateful operator's failure cost
 * @param files every checkpoint file
 * @param plans the cost-aware plan of each budget
 * @param arms every arm, in table order
 * @param scenarios every scenario
 * @param results one per scenario and arm
 * @param seconds the whole benchmark's wall time
 */
public record ReplicationReport(String command, MachineDescription machine, Map<String, Object> parameters,
        List<OperatorCost> costs, List<CheckpointFile> files, Map<Double, ReplicationPlan> plans, List<Arm> arms,
        List<Scenario> scenarios, List<Result> results, double seconds) {

    /** Writes the JSON, its SVG plot and the Markdown that embeds the plot into {@code directory}; returns the Markdown file. */
    public Path write(Path directory) throws IOException {
        Files.createDirectories(directory);
        String name = ResultFiles.newBaseName(directory, "replication");
        Path md = directory.resolve(name + ".md");
        Path jsonFile = directory.resolve(name + ".json");
        Files.writeString(jsonFile, Json.write(json()), StandardCharsets.UTF_8);
        String plot = ResultPlots.writeAndEmbed(jsonFile, "Failure cost protected and job survival per scenario and arm");
        Files.writeString(md, markdown(plot), StandardCharsets.UTF_8);
        System.out.println("[replication-benchmark] wrote " + md + " and " + name + ".json");
        return md;
    }

    private Map<String, Object> json() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", "io.sr3.flink.benchmark.ReplicationBenchmark");
        json.put("kind", "placement-level Monte-Carlo over the real cost model, policy and ring placement; not a cluster run");
        json.put("measuredAtUtc", Instant.now().toString());
        json.put("command", command);
        json.put("machine", machine.toMap());
        json.put("parameters", parameters);
        json.put("seconds", seconds);
        List<Map<String, Object>> ops = new ArrayList<>();
        for (OperatorCost c : costs) {
            OperatorProfile p = c.operator();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("vertexId", p.vertexId());
            m.put("name", p.name());
            m.put("parallelism", p.parallelism());
            m.put("stateBytes", p.stateBytes());
            m.put("inputRecordsPerSecond", p.inputRecordsPerSecond());
            m.put("capacityRecordsPerSecond", p.capacityRecordsPerSecond());
            m.put("failoverRegionSubtasks", p.failoverRegionSubtasks());
            m.put("restoreSeconds", c.restoreSeconds());
            m.put("replaySeconds", c.replaySeconds());
            m.put("failureCostSubtaskSeconds", c.stalledSubtaskSeconds());
            m.put("files", files.stream().filter(f -> f.operatorId().equals(p.vertexId())).count());
            m.put("blocks", files.stream().filter(f -> f.operatorId().equals(p.vertexId())).mapToLong(CheckpointFile::blocks).sum());
            Map<String, Object> chosen = new LinkedHashMap<>();
            plans.forEach((budget, plan) -> chosen.put(String.valueOf(budget), choice(plan, p.vertexId()).copies()));
            m.put("costAwareCopiesByBudget", chosen);
            ops.add(m);
        }
        json.put("operators", ops);
        Map<String, Object> planLines = new LinkedHashMap<>();
        plans.forEach((budget, plan) -> planLines.put(String.valueOf(budget), plan.logLines()));
        json.put("planLogLines", planLines);
        List<Map<String, Object>> armMaps = new ArrayList<>();
        for (Arm a : arms) {
            Map<String, Object> m = new LinkedHashMap<>(); // Map.of would order the keys differently in every JVM
            m.put("id", a.id());
            m.put("description", a.description());
            armMaps.add(m);
        }
        json.put("arms", armMaps);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Result r : results) {
            Stats rec = recovery(r);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("scenario", r.scenario());
            m.put("arm", r.arm());
            m.put("trials", r.trials());
            m.put("meanCopiesPerByte", r.meanCopies());
            m.put("minCopiesPerByte", r.minCopies());
            m.put("maxCopiesPerByte", r.maxCopies());
            m.put("jobSurvived", r.jobSurvived());
            m.put("survivedFraction", r.survivedFraction());
            m.put("survivedWithMetadataFraction", (double) r.jobAndMetadataSurvived() / r.trials());
            m.put("failureCostProtected", r.costProtected());
            m.put("recoveryMeanSecondsSurvived", rec.mean());
            m.put("recoveryP99SecondsSurvived", rec.p99());
            m.put("recoveryMeanSecondsWithPenalty", r.meanRecoveryWithPenalty());
            Map<String, Object> perOp = new LinkedHashMap<>();
            for (int i = 0; i < costs.size(); i++) {
                perOp.put(costs.get(i).operator().vertexId(), (double) r.operatorSurvived()[i] / r.trials());
            }
            m.put("operatorSurvivedFraction", perOp);
            rows.add(m);
        }
        json.put("results", rows);
        List<Map<String, Object>> ratios = new ArrayList<>();
        for (Scenario s : scenarios) {
            for (double budget : plans.keySet()) {
                Result aware = find(s.id(), "cost-aware-" + budget);
                Result blind = find(s.id(), "blind-" + budget);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("scenario", s.id());
                m.put("budget", budget);
                m.put("survivedFraction", ratio(aware.survivedFraction(), blind.survivedFraction()));
                m.put("failureCostProtected", ratio(aware.costProtected(), blind.costProtected()));
                m.put("failureCostLost", ratio(1 - aware.costProtected(), 1 - blind.costProtected()));
                m.put("recoveryMeanSecondsSurvived", ratio(recovery(aware).mean(), recovery(blind).mean()));
                m.put("recoveryMeanSecondsWithPenalty", ratio(aware.meanRecoveryWithPenalty(), blind.meanRecoveryWithPenalty()));
                ratios.add(m);
            }
        }
        json.put("costAwareOverBlind", ratios);
        return json;
    }

    private String markdown(String plot) {
        StringBuilder md = new StringBuilder();
        md.append("# Replication: cost-aware against uniform at the same storage\n\n")
                .append("Measured ").append(Instant.now()).append(" in ").append(String.format(Locale.ROOT, "%.1f", seconds))
                .append(" s. Command (from the repository root):\n\n```\n").append(command).append("\n```\n\n")
                .append("**What this is:** a placement-level Monte-Carlo over the real code, not a cluster run. The "
                        + "real `FailureCostModel` costs the job's operators, the real `ReplicationPolicy` "
                        + "(`cost-aware`) chooses their copies, and each subtask's checkpoint files are placed block "
                        + "by block with the real `ConsistentHash.placement` (writer first, then distinct zones). "
                        + "Then seeded failures kill nodes at once, before any repair, and each operator's latest "
                        + "checkpoint survives if every block and manifest of every one of its files keeps a copy. "
                        + "Recovery times are the cost model's, not measured. Every arm sees the same failures.\n\n");
        md.append(String.format(Locale.ROOT, "Ring: %s nodes in %s zones (two per zone), %s virtual nodes; "
                        + "%s files, %s blocks of %s; %s trials per scenario, seed %s.\n\n",
                parameters.get("nodes"), parameters.get("zones"), parameters.get("virtualNodes"),
                parameters.get("files"), parameters.get("blocks"), Stats.bytes(((Number) parameters.get("blockBytes")).doubleValue()),
                parameters.get("trialsPerScenario"), parameters.get("seed")));

        md.append("## The job and the plans\n\n")
                .append("| Operator | Parallelism | State | Input / capacity | Failover region | Restore R | Replay "
                        + "| Failure cost | Cost per MiB | Files (blocks) |");
        plans.keySet().forEach(b -> md.append(" Copies at ").append(b).append(" |"));
        md.append("\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        plans.keySet().forEach(b -> md.append("---:|"));
        md.append('\n');
        for (OperatorCost c : costs) {
            OperatorProfile p = c.operator();
            long opFiles = files.stream().filter(f -> f.operatorId().equals(p.vertexId())).count();
            long opBlocks = files.stream().filter(f -> f.operatorId().equals(p.vertexId())).mapToLong(CheckpointFile::blocks).sum();
            md.append(String.format(Locale.ROOT, "| %s (`%s`) | %d | %s | %.0f / %.0f per s | %d subtasks | %.2f s "
                            + "| %.1f s | %.0f subtask-s | %.2f | %d (%d) |", p.name(), p.vertexId(), p.parallelism(),
                    Stats.bytes(p.stateBytes()), p.inputRecordsPerSecond(), p.capacityRecordsPerSecond(),
                    p.failoverRegionSubtasks(), c.restoreSeconds(), c.replaySeconds(), c.stalledSubtaskSeconds(),
                    c.stalledSubtaskSeconds() / (p.stateBytes() / (double) BenchmarkJob.MIB), opFiles, opBlocks));
            plans.values().forEach(plan -> md.append(' ').append(choice(plan, p.vertexId()).copies()).append(" |"));
            md.append('\n');
        }
        md.append("\nThe policy's log lines:\n\n```\n");
        plans.forEach((budget, plan) -> plan.logLines().forEach(l -> md.append("budget ").append(budget).append(": ")
                .append(l).append('\n')));
        md.append("```\n\n");

        md.append("## Cost-aware over blind at the same storage\n\n").append(plot)
                .append("| Failure | Budget | Job survived | Failure cost protected | Failure cost lost | Mean recovery, "
                        + "survived | Mean recovery, lost ones at the penalty |\n|---|---:|---|---|---:|---:|---:|\n");
        for (Scenario s : scenarios) {
            for (double budget : plans.keySet()) {
                Result a = find(s.id(), "cost-aware-" + budget);
                Result b = find(s.id(), "blind-" + budget);
                md.append(String.format(Locale.ROOT, "| %s | %s | %s against %s | %s against %s | %s | %s | %s |\n",
                        s.description(), budget, pct(a.survivedFraction()), pct(b.survivedFraction()),
                        pct(a.costProtected()), pct(b.costProtected()),
                        x(ratio(1 - a.costProtected(), 1 - b.costProtected())),
                        x(ratio(recovery(a).mean(), recovery(b).mean())),
                        x(ratio(a.meanRecoveryWithPenalty(), b.meanRecoveryWithPenalty()))));
            }
        }

        md.append("\n## Every arm\n\n");
        for (Scenario s : scenarios) {
            md.append("### ").append(s.description()).append("\n\n")
                    .append("| Arm | Copies per byte | Job survived | ... and `_metadata` | Failure cost protected "
                            + "| Recovery mean (survived) | p99 (survived) | Mean, lost ones at the penalty |\n"
                            + "|---|---:|---:|---:|---:|---:|---:|---:|\n");
            for (Arm arm : arms) {
                Result r = find(s.id(), arm.id());
                Stats rec = recovery(r);
                md.append(String.format(Locale.ROOT, "| %s | %.3f | %s | %s | %s | %s | %s | %.0f s |\n",
                        arm.description(), r.meanCopies(), pct(r.survivedFraction()),
                        pct((double) r.jobAndMetadataSurvived() / r.trials()), pct(r.costProtected()),
                        seconds(rec.mean()), seconds(rec.p99()), r.meanRecoveryWithPenalty()));
            }
            md.append('\n');
        }

        md.append("## Each operator: trials in which its latest checkpoint survived\n\n| Failure | Arm |");
        costs.forEach(c -> md.append(' ').append(c.operator().vertexId()).append(" |"));
        md.append("\n|---|---|");
        costs.forEach(c -> md.append("---:|"));
        md.append('\n');
        for (Scenario s : scenarios) {
            for (Arm arm : arms) {
                Result r = find(s.id(), arm.id());
                md.append("| ").append(s.id()).append(" | ").append(arm.id()).append(" |");
                Arrays.stream(r.operatorSurvived()).forEach(n -> md.append(' ').append(pct((double) n / r.trials())).append(" |"));
                md.append('\n');
            }
        }

        md.append("\n## Assumptions\n\n")
                .append(String.format(Locale.ROOT, "- Cost model facts: one subtask restores at %s/s, detection "
                                + "and redeployment take %.0f s, the latest checkpoint is %.0f s old when a failure strikes.\n",
                        Stats.bytes(((Number) parameters.get("restoreBytesPerSecond")).doubleValue()),
                        ((Number) parameters.get("detectionSeconds")).doubleValue(),
                        ((Number) parameters.get("checkpointAgeSeconds")).doubleValue()))
                .append("- Recovery of a survived failure: detection plus the slowest restore + replay among the "
                        + "operators Flink restarts (those with a subtask on a dead node and every operator in their "
                        + "failover regions); spare slots exist elsewhere; the restore rate does not depend on the "
                        + "number of copies. So among survived failures the recovery time depends only on which "
                        + "nodes died, not on the copies: arms differ in it only through which failures they survive.\n")
                .append(String.format(Locale.ROOT, "- A failure that loses any operator's latest checkpoint is not "
                                + "survived: Flink restores a checkpoint whole, and the earlier ones share the lost "
                                + "incremental files. It is charged %.0f s (restart from the last savepoint, an "
                                + "assumption; the reprocessing since the savepoint is not in it) in the column "
                                + "\"lost ones at the penalty\" only.\n",
                        ((Number) parameters.get("penaltySeconds")).doubleValue()))
                .append("- Failure cost protected: the operators whose latest checkpoint survived, each weighted by "
                        + "its failure cost, over all operators and trials: what the policy ranks by.\n")
                .append("- Nodes die at once, before the ring repairs anything; their disks are gone.\n")
                .append("- Subtask i of every vertex runs on node i mod 8 (slot sharing); a subtask's file puts its "
                        + "first copy on its own node. Manifests get max(file copies, replication factor) copies, "
                        + "placed without a writer, as the real writer stores them.\n")
                .append("- `_metadata` (one block, written by the JobManager, which is no ring member) gets the "
                        + "replication factor's copies in every arm but uniform 3: the plan covers only the operators' "
                        + "files. Its column is the only one that counts it.\n")
                .append("- Blind arms draw which files get the extra copy again for every trial; the storage columns "
                        + "show the mean of those draws (each draw within 1% of the cost-aware plan's).\n");
        md.append("\n## Machine\n\n");
        machine.toMap().forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        return md.toString();
    }

    private Result find(String scenario, String arm) {
        return results.stream().filter(r -> r.scenario().equals(scenario) && r.arm().equals(arm)).findFirst()
                .orElseThrow(() -> new IllegalStateException("No result for " + scenario + ", " + arm));
    }

    private static ReplicaChoice choice(ReplicationPlan plan, String vertexId) {
        return plan.choices().stream().filter(c -> c.vertexId().equals(vertexId)).findFirst()
                .orElseThrow(() -> new IllegalStateException("The plan names no vertex " + vertexId));
    }

    private static Stats recovery(Result r) {
        return Stats.of(Arrays.stream(r.survivedRecoverySeconds()).boxed().toList());
    }

    private static double ratio(double a, double b) {
        return b == 0 ? Double.NaN : a / b;
    }

    private static String pct(double f) {
        return String.format(Locale.ROOT, "%.2f%%", 100 * f);
    }

    private static String seconds(double s) {
        return Double.isNaN(s) ? "none survived" : String.format(Locale.ROOT, "%.1f s", s);
    }

    private static String x(double ratio) {
        return Double.isNaN(ratio) ? "n/a" : String.format(Locale.ROOT, "%.2fx", ratio);
    }
}
