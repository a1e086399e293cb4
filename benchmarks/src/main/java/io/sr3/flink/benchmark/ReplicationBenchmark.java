package io.sr3.flink.benchmark;

import io.sr3.flink.benchmark.replication.BenchmarkJob;
import io.sr3.flink.benchmark.replication.BenchmarkJob.CheckpointFile;
import io.sr3.flink.benchmark.replication.FailureTrials;
import io.sr3.flink.benchmark.replication.FailureTrials.Arm;
import io.sr3.flink.benchmark.replication.FailureTrials.Result;
import io.sr3.flink.benchmark.replication.FailureTrials.Scenario;
import io.sr3.flink.benchmark.replication.ReplicationReport;
import io.sr3.flink.harness.BenchmarkMain;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.replication.FailureCostModel;
import io.sr3.flink.replication.OperatorCost;
import io.sr3.flink.replication.RecoveryFacts;
import io.sr3.flink.replication.ReplicationMode;
import io.sr3.flink.replication.ReplicationPlan;
import io.sr3.flink.replication.ReplicationPolicy;
import io.sr3.flink.replication.ReplicationSettings;
import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Cost-aware replication against uniform replication at the same storage, over randomized node
 * losses: the fraction of failures the job survives, the share of the model's failure cost
 * protected, and the recovery time, side by side in one invocation.
 *
 * <p><b>What this is:</b> a placement-level Monte-Carlo over the real code, not a cluster run. The
 * job ({@link BenchmarkJob}: six vertices, five stateful operators from 10 MiB to 2 GiB) is
 * costed by the real {@link FailureCostModel}, planned by the real {@link ReplicationPolicy}, and
 * each subtask's checkpoint files (64 MiB files of 4 MiB blocks, the writer's keys) are placed on
 * a ring of {@link #NODES} nodes in {@link #ZONES} zones by the real
 * {@link ConsistentHash#placement} ({@link #VIRTUAL_NODES} virtual nodes). Then
 * {@link #TRIALS} seeded failures per scenario kill nodes at once, before any repair, and
 * {@link FailureTrials} checks which operators keep a copy of every block and manifest. Nothing
 * is written to disk or sent over a network, so the recovery times are the model's, not measured.
 *
 * <p>Arms, all seeing the same failures: uniform 2 and uniform 3 (references); for each budget
 * in {@link #BUDGETS}, the cost-aware plan ({@code min-copies} 2, {@code max-copies}
 * {@link #MAX_COPIES}) and a blind arm that spends exactly the storage the plan actually used
 * (its bytes-weighted mean copies, at most the budget: operators' copies are integers, so a plan
 * may leave part of the budget unspent) by giving a random subset of files one more copy, drawn
 * again for every trial. The two must store the same bytes within 1%, or the run fails.
 *
 * <p>Usage: {@code mvn -B -q -pl benchmarks exec:exec@replication-benchmark}; the only argument
 * is the results directory ({@code replication-<date>-<commit>.md} and {@code .json}).
 * {@code -Dsr3.bench.trials} and {@code -Dsr3.bench.seed} change the trials per scenario and the
 * seed. Exit code 0, 1 when the storage of an arm pair differs by more than 1%, 2 on errors.
 */
public final class ReplicationBenchmark {

    static final int NODES = 8;
    /** Two nodes per zone: a zone failure takes two nodes at once. */
    static final int ZONES = 4;
    /** The ring's default virtual nodes per member. */
    static final int VIRTUAL_NODES = 64;
    /** {@code sr3.ring.replication-factor}: uniform's copies, the manifests' floor and {@code _metadata}'s copies. */
    static final int REPLICATION_FACTOR = 2;
    static final int MAX_COPIES = 4;
    static final double[] BUDGETS = {2.25, 2.5};
    static final int TRIALS = Integer.getInteger("sr3.bench.trials", 10_000);
    static final long SEED = Long.getLong("sr3.bench.seed", 22);
    /**
     * What the cluster measured: one subtask restores at 100 MiB/s; a lost TaskManager is detected
     * and its tasks redeployed in 10 s (heartbeat timeout); checkpoints every 60 s, so the latest
     * is 30 s old on average when a failure strikes.
     */
    static final RecoveryFacts FACTS = new RecoveryFacts(100 * BenchmarkJob.MIB, Duration.ofSeconds(10),
            Duration.ofSeconds(30));
    /**
     * Charged to a failure that loses some operator's latest checkpoint: a restart from the last
     * savepoint, taken as 1 hour (an assumption; the reprocessing since that savepoint is not in it).
     */
    static final double PENALTY_SECONDS = 3600;
    static final String COMMAND = "mvn -B -q install -DskipTests && mvn -B -q -pl benchmarks exec:exec@replication-benchmark"
            + (TRIALS != 10_000 ? " -Dsr3.bench.trials=" + TRIALS : "") + (SEED != 22 ? " -Dsr3.bench.seed=" + SEED : "");

    private ReplicationBenchmark() {}

    public static void main(String[] args) {
        BenchmarkMain.run("ReplicationBenchmark", args, (tmp, results) -> run(results));
    }

    private static int run(Path resultsDirectory) throws Exception {
        long start = System.nanoTime();
        MachineDescription machine = MachineDescription.ofThisMachine();
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            members.add(new Member("tm-" + i, "10.0.0." + (i + 1), 7100, "zone-" + (i % ZONES)));
        }
        ConsistentHash ring = ConsistentHash.of(members, VIRTUAL_NODES);
        BenchmarkJob job = new BenchmarkJob(NODES);
        List<OperatorCost> costs = job.profiles().stream().map(p -> FailureCostModel.cost(p, FACTS)).toList();
        Random ids = new Random(SEED);
        List<CheckpointFile> files = job.files(ids);
        FailureTrials trials = new FailureTrials(ring, job, files, BenchmarkJob.metadataPath(ids), costs,
                REPLICATION_FACTOR, MAX_COPIES, FACTS.detection().toMillis() / 1000.0, PENALTY_SECONDS);

        List<Arm> arms = new ArrayList<>();
        arms.add(new Arm("uniform-2", "uniform rf 2 (reference)", trials.perFile(everyOperator(costs, 2)), 0, 2));
        arms.add(new Arm("uniform-3", "uniform rf 3 (reference)", trials.perFile(everyOperator(costs, 3)), 0, 3));
        Map<Double, ReplicationPlan> plans = new LinkedHashMap<>();
        for (double budget : BUDGETS) {
            ReplicationPlan plan = new ReplicationPolicy(new ReplicationSettings(ReplicationMode.COST_AWARE, budget,
                    REPLICATION_FACTOR, MAX_COPIES, REPLICATION_FACTOR)).plan(costs, NODES, ZONES);
            plans.put(budget, plan);
            plan.logLines().forEach(line -> say("budget %s: %s", budget, line));
            Map<String, Integer> copies = new LinkedHashMap<>();
            plan.choices().forEach(c -> copies.put(c.vertexId(), c.copies()));
            int[] perFile = trials.perFile(copies);
            double spent = trials.meanCopies(perFile);
            arms.add(new Arm("cost-aware-" + budget, String.format(Locale.ROOT,
                    "cost-aware, budget %s (%.3f spent)", budget, spent), perFile, 0, plan.defaultCopies()));
            arms.add(new Arm("blind-" + budget, String.format(Locale.ROOT,
                    "blind at the same storage (%.3f)", spent), null, spent, REPLICATION_FACTOR));
        }

        List<Scenario> scenarios = List.of(
                new Scenario("nodes-2", "2 random nodes at once", r -> randomNodes(r, 2, 0)),
                new Scenario("nodes-3", "3 random nodes at once", r -> randomNodes(r, 3, 0)),
                new Scenario("zone-plus-1", "a whole zone (2 nodes) and 1 random node elsewhere", r -> {
                    long zone = zone(r.nextInt(ZONES));
                    return zone | randomNodes(r, 1, zone);
                }));
        List<Result> results = new ArrayList<>();
        for (int s = 0; s < scenarios.size(); s++) {
            for (Result r : trials.run(scenarios.get(s), arms, TRIALS, SEED + s)) {
                results.add(r);
                say("%s, %s: survived %.4f, cost protected %.4f, copies %.3f (%.3f..%.3f), mean recovery %.1f s "
                        + "(with penalty %.1f s)", r.scenario(), r.arm(), r.survivedFraction(), r.costProtected(),
                        r.meanCopies(), r.minCopies(), r.maxCopies(), mean(r.survivedRecoverySeconds()),
                        r.meanRecoveryWithPenalty());
            }
        }

        int code = 0;
        for (double budget : BUDGETS) {
            double aware = find(results, scenarios.get(0).id(), "cost-aware-" + budget).meanCopies();
            Result blind = find(results, scenarios.get(0).id(), "blind-" + budget);
            double worst = Math.max(Math.abs(blind.minCopies() / aware - 1), Math.abs(blind.maxCopies() / aware - 1));
            say("budget %s: cost-aware stores %.4f copies per byte, blind %.4f (%.4f..%.4f), worst difference %.2f%%",
                    budget, aware, blind.meanCopies(), blind.minCopies(), blind.maxCopies(), 100 * worst);
            if (worst > 0.01) {
                say("STORAGE MISMATCH at budget %s: the arms must store the same bytes within 1%%", budget);
                code = 1;
            }
        }
        long blocks = files.stream().mapToLong(CheckpointFile::blocks).sum();
        ReplicationReport report = new ReplicationReport(COMMAND, machine, parameters(files.size(), blocks), costs, files,
                plans, arms, scenarios, results, (System.nanoTime() - start) / 1e9);
        report.write(resultsDirectory);
        return code;
    }

    private static Map<String, Object> parameters(int files, long blocks) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("nodes", NODES);
        p.put("zones", ZONES);
        p.put("virtualNodes", VIRTUAL_NODES);
        p.put("replicationFactor", REPLICATION_FACTOR);
        p.put("minCopies", REPLICATION_FACTOR);
        p.put("maxCopies", MAX_COPIES);
        p.put("budgets", List.of(BUDGETS[0], BUDGETS[1]));
        p.put("trialsPerScenario", TRIALS);
        p.put("seed", SEED);
        p.put("fileBytes", BenchmarkJob.FILE_BYTES);
        p.put("blockBytes", BenchmarkJob.BLOCK_BYTES);
        p.put("files", files);
        p.put("blocks", blocks);
        p.put("restoreBytesPerSecond", FACTS.restoreBytesPerSecond());
        p.put("detectionSeconds", FACTS.detection().toMillis() / 1000.0);
        p.put("checkpointAgeSeconds", FACTS.checkpointAge().toMillis() / 1000.0);
        p.put("penaltySeconds", PENALTY_SECONDS);
        return p;
    }

    private static Map<String, Integer> everyOperator(List<OperatorCost> costs, int copies) {
        Map<String, Integer> m = new LinkedHashMap<>();
        costs.forEach(c -> m.put(c.operator().vertexId(), copies));
        return m;
    }

    /** {@code k} distinct random nodes outside {@code exclude}, as a bit set. */
    static long randomNodes(Random random, int k, long exclude) {
        long chosen = 0;
        for (int picked = 0; picked < k; ) {
            int node = random.nextInt(NODES);
            long bit = 1L << node;
            if (((chosen | exclude) & bit) == 0) {
                chosen |= bit;
                picked++;
            }
        }
        return chosen;
    }

    /** The nodes of zone {@code z}: member i is in zone {@code i mod ZONES}. */
    static long zone(int z) {
        long nodes = 0;
        for (int i = z; i < NODES; i += ZONES) {
            nodes |= 1L << i;
        }
        return nodes;
    }

    private static Result find(List<Result> results, String scenario, String arm) {
        return results.stream().filter(r -> r.scenario().equals(scenario) && r.arm().equals(arm)).findFirst()
                .orElseThrow(() -> new IllegalStateException("No result for " + scenario + ", " + arm));
    }

    private static double mean(double[] values) {
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        return values.length == 0 ? Double.NaN : sum / values.length;
    }

    private static void say(String format, Object... args) {
        System.out.println("[replication-benchmark] " + String.format(Locale.ROOT, format, args));
    }
}
