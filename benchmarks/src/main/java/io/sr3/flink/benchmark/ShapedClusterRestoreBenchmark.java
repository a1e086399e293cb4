package io.sr3.flink.benchmark;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.cluster.ClusterJobs;
import io.sr3.flink.cluster.ClusterSpec;
import io.sr3.flink.cluster.FlinkProcess;
import io.sr3.flink.cluster.NamespaceNetwork;
import io.sr3.flink.cluster.ProcessCluster;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.BurstSchedule;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Restore structures on a real multi-process cluster whose links the kernel shapes: the
 * JobManager and 4 or 5 TaskManagers as separate JVMs, each in its own network namespace
 * ({@link NamespaceNetwork}), replication factor 3, a job with one keyed RocksDB subtask per TaskManager.
 * TaskManager {@code tm1} (host 1, "R") is SIGKILLed and started again in its host with an empty
 * store and {@code sr3.restore.strategy} set to {@code auto}, {@code star}, {@code line} or
 * {@code tree}, in turn, for several rounds; measured is its subtask's restore as its restore log
 * line reports it (the actual time, and under {@code auto} the structure chosen, the predictions and
 * where every estimate came from). No probe runs unless {@code -Dsr3.bench.probe-interval} is set:
 * what {@code auto} knows it learned from the cluster's own checkpoint traffic.
 *
 * <p>Usage (root, for the namespaces): {@code mvn -B -q -pl benchmarks exec:exec@shaped-cluster-benchmark}
 * ({@code -Dsr3.bench.state-size=256m}, {@code -Dsr3.bench.shaped-rounds=2},
 * {@code -Dsr3.bench.shaped-scenarios=detour,even,two-near}); the only argument is the results directory.
 */
public final class ShapedClusterRestoreBenchmark {

    /**
     * One shaped network: a host per TaskManager, the job's parallelism one subtask per TaskManager.
     *
     * @param taskManagers TaskManagers, hosts and the job's parallelism
     * @param fastLink bytes per second of every link not named in {@code intoRecovering}
     * @param intoRecovering bytes per second of the link from host {@code k} into host 1, by {@code k}
     */
    record ShapedScenario(String name, String meaning, int taskManagers, long fastLink, Map<Integer, Long> intoRecovering) {

        long rate(int from, int to) {
            return to == RECOVERING ? intoRecovering.getOrDefault(from, fastLink) : fastLink;
        }

        void apply(NamespaceNetwork network) throws Exception {
            for (int to = 1; to <= network.hosts(); to++) {
                network.shapeInbound(to, INBOUND);
                for (int from = 1; from <= network.hosts(); from++) {
                    if (from != to) {
                        network.shapeLink(from, to, rate(from, to));
                    }
                }
            }
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("meaning", meaning);
            m.put("taskManagers", taskManagers);
            m.put("linkMBps", fastLink / 1e6);
            intoRecovering.forEach((from, rate) -> m.put("tm" + from + "IntoTm1MBps", rate / 1e6));
            m.put("inboundPortMBps", INBOUND / 1e6);
            m.put("sizeFactor", 1);
            return m;
        }
    }

    static final List<ShapedScenario> ALL = List.of(
            new ShapedScenario("detour", "tm1's direct links from tm3 and tm4 are poor (2 MB/s) while tm2 reaches tm1 and "
                    + "everyone else at 40 MB/s, as when the direct path is worse than a detour through a neighbour: line's "
                    + "or tree's regime", 4, 40_000_000, Map.of(3, 2_000_000L, 4, 2_000_000L)),
            new ShapedScenario("even", "every link 12 MB/s and the inbound port takes them all at once: star's regime",
                    4, 12_000_000, Map.of()),
            new ShapedScenario("two-near", "5 TaskManagers: tm2 and tm3 reach tm1 at 20 MB/s each, tm4 and tm5 at 1 MB/s, "
                    + "every other link 40 MB/s: a line delivers through one near holder, a tree through both: tree's regime",
                    5, 40_000_000, Map.of(2, 20_000_000L, 3, 20_000_000L, 4, 1_000_000L, 5, 1_000_000L)));

    static final int RECOVERING = 1;
    static final String RECOVERING_NAME = "tm" + RECOVERING;
    static final int REPLICATION = 3;
    static final long INBOUND = 1_000_000_000;
    static final List<String> STRATEGIES = List.of("auto", "star", "line", "tree");
    static final int ROUNDS = Integer.getInteger("sr3.bench.shaped-rounds", 2);
    static final List<String> SCENARIOS = List.of(System.getProperty("sr3.bench.scenarios", "detour,even,two-near").split(","));
    static final String PROBE_INTERVAL = System.getProperty("sr3.bench.probe-interval", "").trim();
    static final Duration INTERVAL = Duration.ofMillis(1000);
    /** The job and its state are the process recovery benchmark's ({@code -Dsr3.bench.state-size}). */
    static final long STATE_BYTES = ProcessRecoveryBenchmark.STATE_BYTES;
    static final long FILL_RECORDS = ProcessRecoveryBenchmark.FILL_RECORDS;
    static final BurstSchedule SCHEDULE = ProcessRecoveryBenchmark.SCHEDULE;
    static final Duration TIMEOUT = Duration.ofMinutes(10);
    static final String COMMAND = "mvn -B -q -pl benchmarks exec:exec@shaped-cluster-benchmark";

    /** The restore log line of one subtask ({@code RestoreReport.logLine}). */
    static final Pattern RESTORE_LINE = Pattern.compile("sr3 restore of .*?: (\\d+) bytes in (\\d+) blocks \\((\\d+) "
            + "local\\) from (\\d+) holder\\(s\\) by (\\w+) \\((.*?); predicted (.*?)\\), predicted ([0-9.]+) s, actual "
            + "([0-9.]+) s");

    /** One restore of tm1's subtask. */
    record Trial(String scenario, int round, String strategy, long bytes, int holders, String structure,
            double predictedSeconds, double actualSeconds, String predictions, String line) {

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("round", round);
            m.put("strategy", strategy);
            m.put("bytes", bytes);
            m.put("holders", holders);
            m.put("structure", structure);
            m.put("predictedSeconds", predictedSeconds);
            m.put("actualSeconds", actualSeconds);
            m.put("predictions", predictions);
            m.put("logLine", line);
            return m;
        }
    }

    private ShapedClusterRestoreBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("Usage: ShapedClusterRestoreBenchmark <results directory>");
            System.exit(2);
        }
        String unavailable = NamespaceNetwork.unavailableReason();
        if (unavailable != null) {
            System.err.println("[shaped-cluster] cannot run: " + unavailable);
            System.exit(3);
        }
        MachineDescription machine = MachineDescription.ofThisMachine();
        Path work = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().resolve("shaped-cluster");
        org.apache.flink.util.FileUtils.deleteDirectory(work.toFile());
        long started = System.nanoTime();
        List<Trial> trials = new ArrayList<>();
        Map<String, String> failures = new LinkedHashMap<>();
        for (ShapedScenario scenario : ALL) {
            if (SCENARIOS.contains(scenario.name())) {
                try {
                    run(scenario, work.resolve(scenario.name()), trials);
                } catch (Exception e) {
                    // The trials so far are reported; the failure is named there and here.
                    say("%s failed: %s", scenario.name(), e);
                    failures.put(scenario.name(), String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
                }
            }
        }
        Path[] files = ShapedClusterReport.write(Path.of(args[0]), machine, trials, failures,
                (System.nanoTime() - started) / 1e9);
        say("wrote %s and %s", files[0], files[1]);
    }

    /** Runs one scenario's cluster and adds its trials to {@code trials} as they complete. */
    private static void run(ShapedScenario scenario, Path dir, List<Trial> trials) throws Exception {
        say("%s: %s", scenario.name(), scenario.meaning());
        Map<String, String> extra = new LinkedHashMap<>(ProcessRecoveryBenchmark.STICKY_SLOTS);
        extra.put("metrics.fetcher.update-interval", String.valueOf(WatermarkLag.FETCH_INTERVAL_MILLIS));
        // Production repair: the returning node is not refilled while it restores.
        extra.put(Sr3Options.REPAIR_DELAY.key(), ProcessRecoveryBenchmark.REPAIR_DELAY.toMillis() + " ms");
        extra.put(Sr3Options.REPAIR_INTERVAL.key(), ProcessRecoveryBenchmark.REPAIR_INTERVAL.toMillis() + " ms");
        // The nodes listen on addresses other hosts reach: the ring refuses to run unauthenticated there.
        extra.put(Sr3Options.TRANSPORT_SECRET.key(), java.util.UUID.randomUUID().toString());
        if (!PROBE_INTERVAL.isEmpty()) {
            extra.put(Sr3Options.RESTORE_PROBE_INTERVAL.key(), PROBE_INTERVAL);
        }
        // Every trial spends restarts while tm1 is away; fixed-delay attempts count over the job's life.
        ClusterSpec spec = ClusterSpec.sr3(scenario.taskManagers(), REPLICATION).withCheckpointInterval(INTERVAL)
                .withRestartAttempts(100_000).withExtraConfig(extra);
        try (NamespaceNetwork network = NamespaceNetwork.create(scenario.taskManagers())) {
            scenario.apply(network);
            try (ProcessCluster cluster = ProcessCluster.start(spec, dir, network)) {
                JobID job = fill(scenario, cluster, dir);
                for (int round = 1; round <= ROUNDS; round++) {
                    for (String strategy : order(round)) {
                        Trial trial = restore(scenario, cluster, job, round, strategy);
                        trials.add(trial);
                        say("%s round %d %s: %s in %.2f s by %s (predicted %.2f s; %s)", scenario.name(), round, strategy,
                                Stats.bytes(trial.bytes()), trial.actualSeconds(), trial.structure(),
                                trial.predictedSeconds(), trial.predictions());
                    }
                }
                cluster.cancel(job);
            }
        }
    }

    /**
     * The strategies in the order round {@code round} runs them: each round starts half-way
     * further along, so that no strategy always runs first, right after the fill or the previous
     * round's last restore.
     */
    static List<String> order(int round) {
        List<String> order = new ArrayList<>(STRATEGIES);
        java.util.Collections.rotate(order, -((round - 1) * STRATEGIES.size() / 2) % STRATEGIES.size());
        return order;
    }

    /** Submits the job and waits until the fill is processed and a checkpoint of the full state completed. */
    private static JobID fill(ShapedScenario scenario, ProcessCluster cluster, Path dir) throws Exception {
        TestJobSpec spec = TestJobSpec.of("shaped-cluster-" + scenario.name()).withRecords(SCHEDULE.records(), 0)
                .withKeys(ProcessRecoveryBenchmark.KEYS)
                .withPayload(ProcessRecoveryBenchmark.PAYLOAD_BYTES, ProcessRecoveryBenchmark.SLOTS);
        long origin = System.currentTimeMillis();
        JobID job = cluster.submit(ClusterJobs.scheduledJob(spec, SCHEDULE, origin, scenario.taskManagers(), dir.resolve("results"),
                INTERVAL));
        cluster.awaitAllTasksRunning(job, Duration.ofSeconds(120));
        WatermarkLag lag = new WatermarkLag(cluster, job, "keyed-state", SCHEDULE, origin);
        Deadline.poll("the fill of " + FILL_RECORDS + " records to be processed", TIMEOUT, () -> {
            failIfNotRunning(cluster, job);
            return lag.processedIndex() >= FILL_RECORDS;
        });
        long filledAt = System.currentTimeMillis();
        awaitCheckpointTriggeredAfter(cluster, job, filledAt);
        say("%s: %s of state filled and checkpointed after %.0f s", scenario.name(),
                Stats.bytes(cluster.checkpoints(job).path("latest").path("completed").path("state_size").asLong()),
                (System.currentTimeMillis() - origin) / 1e3);
        return job;
    }

    /**
     * SIGKILLs tm1, starts it again in its host with an empty store and the strategy, and waits for
     * its restore line, every task RUNNING and a checkpoint after the restore.
     */
    private static Trial restore(ShapedScenario scenario, ProcessCluster cluster, JobID job, int round, String strategy)
            throws Exception {
        FlinkProcess victim = cluster.liveTaskManager(RECOVERING_NAME);
        if (victim == null) {
            throw new IllegalStateException(RECOVERING_NAME + " is not running");
        }
        Path log = victim.directory().resolve(RECOVERING_NAME + ".log");
        int linesBefore = Files.readAllLines(log, StandardCharsets.UTF_8).size();
        cluster.kill(victim);
        cluster.restartTaskManager(RECOVERING_NAME, true, Map.of(Sr3Options.RESTORE_STRATEGY.key(), strategy));
        String jobTag = "job_" + job + "_";
        Deadline.poll(RECOVERING_NAME + "'s restore line for " + strategy, TIMEOUT, () -> {
            failIfNotRunning(cluster, job);
            return keyedRestoreLine(log, linesBefore, jobTag) != null;
        });
        cluster.awaitAllTasksRunning(job, TIMEOUT);
        awaitCheckpointTriggeredAfter(cluster, job, System.currentTimeMillis());
        String line = keyedRestoreLine(log, linesBefore, jobTag);
        Matcher m = RESTORE_LINE.matcher(line);
        if (!m.find()) {
            throw new IllegalStateException("Not a restore line: " + line);
        }
        return new Trial(scenario.name(), round, strategy, Long.parseLong(m.group(1)), Integer.parseInt(m.group(4)),
                m.group(5).toLowerCase(java.util.Locale.ROOT), Double.parseDouble(m.group(8)), Double.parseDouble(m.group(9)),
                m.group(7), line.substring(line.indexOf("sr3 restore of")));
    }

    /**
     * The restore line of the job's keyed state in {@code log} after its first {@code skip} lines:
     * the largest of the subtask's restores (its operator state is small); null while none with
     * bytes is there.
     */
    @Nullable
    private static String keyedRestoreLine(Path log, int skip, String jobTag) {
        List<String> lines;
        try {
            lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String best = null;
        long bestBytes = 0;
        for (String line : lines.subList(Math.min(skip, lines.size()), lines.size())) {
            Matcher m = RESTORE_LINE.matcher(line);
            if (line.contains(jobTag) && m.find() && Long.parseLong(m.group(1)) > bestBytes) {
                best = line;
                bestBytes = Long.parseLong(m.group(1));
            }
        }
        return best;
    }

    private static void awaitCheckpointTriggeredAfter(ProcessCluster cluster, JobID job, long millis) {
        Deadline.poll("a checkpoint triggered after " + millis, TIMEOUT, () -> {
            failIfNotRunning(cluster, job);
            return cluster.checkpoints(job).path("latest").path("completed").path("trigger_timestamp").asLong() > millis;
        });
    }

    private static void failIfNotRunning(ProcessCluster cluster, JobID job) {
        String status = cluster.jobStatus(job);
        if (List.of("FAILED", "FINISHED", "CANCELED").contains(status)) {
            throw new IllegalStateException("Job " + job + " is " + status + ": " + cluster.exceptions(job));
        }
    }

    @Nullable
    static String probeInterval() {
        return PROBE_INTERVAL.isEmpty() ? null : PROBE_INTERVAL;
    }

    static void say(String format, Object... args) {
        System.out.println("[shaped-cluster] " + String.format(format, args));
        System.out.flush();
    }
}
