package io.sr3.flink.benchmark;

import io.sr3.flink.benchmark.RunResult.Throughput;
import io.sr3.flink.harness.BenchmarkMain;
import io.sr3.flink.harness.FlinkSettings;
import io.sr3.flink.harness.JobProbe;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.harness.TestJobs;
import io.sr3.flink.harness.ThreadCpu;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.EmbeddedCluster;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobmaster.JobResult;

import javax.annotation.Nullable;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * flink-sr3 (replication factor 2 and 1) against Flink's RocksDB backend with {@code file://} and
 * with HDFS checkpoints, on the same job with the same parameters, in one invocation: runs
 * alternate between the backends in every round so that drift of a shared machine hits all alike.
 *
 * <p>Every run starts a fresh MiniCluster (and, for flink-sr3, a fresh 3-node ring) and executes:
 * <ol>
 *   <li><b>throughput</b>: {@link io.sr3.flink.testjob.StatefulTestJob} with a rate-unlimited
 *       source, checkpointing every {@link #CHECKPOINT_INTERVAL}; records/s over a {@link SteadyWindow}
 *       in the middle of the run, and to FINISHED;
 *   <li><b>checkpoints and restores</b> ({@link RestorePhase}): the same job at a fixed rate; once
 *       the keyed state is full and a few checkpoints completed, one task failure is injected (the
 *       job's own {@code FailureInjector}, armed from here), later a TaskManager is closed and
 *       replaced; checkpoint durations come from Flink's checkpoint statistics, restore times from
 *       task state timestamps, CPU per thread group from {@link ThreadCpu}.
 * </ol>
 * Both phases must deliver exactly the expected per-key results. Nothing here asserts a timing.
 *
 * <p>Usage: {@code mvn -B -q -pl benchmarks exec:exec@backend-benchmark} ({@code -Dsr3.bench.state-size=2g}
 * for 2 GiB of keyed state; {@code JAVA_TOOL_OPTIONS="-Dsr3.bench.rounds=1 -Dsr3.bench.backends=flink-sr3,rocksdb-file"}
 * for fewer runs); the only argument is the results directory, where
 * {@code backend-comparison-<state size>-<date>-<commit>.md}, {@code .json} and {@code .svg} are written.
 */
public final class BackendComparisonBenchmark {

    /**
     * The compared backends, in the order they run in every round and appear in the report; each
     * flink-sr3 variant is compared with each RocksDB one.
     */
    enum Backend {
        SR3("flink-sr3", 2),
        SR3_RF1("flink-sr3-rf1", 1),
        FILE("rocksdb-file", 0),
        HDFS("rocksdb-hdfs", 0);

        final String label;
        /** Copies of every checkpoint block on the ring; 0 for the RocksDB baselines. */
        final int replicationFactor;

        Backend(String label, int replicationFactor) {
            this.label = label;
            this.replicationFactor = replicationFactor;
        }

        String description() {
            return switch (this) {
                case SR3, SR3_RF1 -> "flink-sr3: Sr3StateBackendFactory, sr3.working-state=rocksdb, incremental, "
                        + "checkpoints on " + RING_NODES + " in-JVM ring nodes (loopback), replication factor "
                        + replicationFactor;
                case FILE -> "Flink RocksDB (state.backend.type=rocksdb), incremental, "
                        + "execution.checkpointing.storage=filesystem on a local file:// directory";
                case HDFS -> "Flink RocksDB, incremental, checkpoints on hdfs:// (flink-hadoop-fs): an in-JVM "
                        + "MiniDFSCluster (Hadoop 3.5.0) with 3 DataNodes and replication 3";
            };
        }

        boolean isSr3() {
            return replicationFactor > 0;
        }

        /** The backends to run: all, or those named in {@code -Dsr3.bench.backends=flink-sr3,rocksdb-file}. */
        static List<Backend> selected() {
            String names = System.getProperty("sr3.bench.backends");
            List<Backend> all = List.of(values());
            if (names == null) {
                return all;
            }
            List<String> wanted = List.of(names.split(","));
            return all.stream().filter(b -> wanted.contains(b.label)).toList();
        }
    }

    static final int ROUNDS = Integer.getInteger("sr3.bench.rounds", 3);
    /** Two cores: one slot per TaskManager and parallelism 2, so the keyBy shuffle crosses TaskManagers. */
    static final int TASK_MANAGERS = 2;
    static final int SLOTS_PER_TASK_MANAGER = 1;
    static final int PARALLELISM = 2;
    static final int RING_NODES = 3;
    static final Duration CHECKPOINT_INTERVAL = Duration.ofSeconds(2);

    /** Keyed state of the job: {@code -Dsr3.bench.state-size=2g}, 256 MiB unless set; also names the result files. */
    static final String STATE_SIZE = System.getProperty("sr3.bench.state-size", "256m").trim().toLowerCase(java.util.Locale.ROOT);
    static final long STATE_BYTES = ProcessRecoveryBenchmark.parseSize(STATE_SIZE);
    /** Every key holds 8 slots of 1 KiB of incompressible payload; the key count follows from the state size. */
    static final int PAYLOAD_SLOTS = 8;
    static final int PAYLOAD_BYTES = 1024;
    static final int KEYS = (int) (STATE_BYTES / (PAYLOAD_SLOTS * PAYLOAD_BYTES));
    /** Records after which every key's state exists (one record per key and slot). */
    static final long FILL_RECORDS = (long) KEYS * PAYLOAD_SLOTS;

    /**
     * Rate-unlimited phase: the records that fill the state and 600,000 more, so the steady window
     * holds some 450,000-570,000 updates of existing state (about 25 s here) at every state size.
     */
    static final long THROUGHPUT_RECORDS = FILL_RECORDS + 600_000;
    /** The steady window ends where this share of the phase's input is processed, before the end-of-input work. */
    static final double STEADY_WINDOW_END = 0.95;
    static final Duration THROUGHPUT_SAMPLE_INTERVAL = Duration.ofMillis(50);
    /** One untimed rate-unlimited run per backend first, so that JIT warm-up does not count against run 1. */
    static final long WARM_UP_RECORDS = 150_000;

    /**
     * Checkpoint/restore phase at a fixed rate: the task failure comes 12 s (about 6 checkpoints of
     * the full state) after the state is full, the TaskManager loss after the first checkpoint that
     * follows that restore and {@link #CHECKPOINTS_BEFORE_TASK_MANAGER_LOSS} more; the input lasts
     * 30 s beyond the task failure.
     */
    static final double RATE = 10_000;
    static final Duration FAIL_AFTER = Duration.ofMillis((long) (1000.0 * FILL_RECORDS / RATE) + 12_000);
    static final long RECORDS = (long) (RATE * (FAIL_AFTER.toSeconds() + 30));
    static final int MIN_CHECKPOINTS_BEFORE_FAILURE = 3;
    static final int CHECKPOINTS_BEFORE_TASK_MANAGER_LOSS = 2;

    /** Four minutes, and a minute more for every 300,000 records of the rate-unlimited phase. */
    static final Duration PHASE_TIMEOUT = Duration.ofSeconds(240 + THROUGHPUT_RECORDS / 5_000);
    static final String COMMAND = "mvn -B -q -pl benchmarks exec:exec@backend-benchmark";

    private final long start = System.currentTimeMillis();
    private final Path tmp;
    private final List<Backend> backends = Backend.selected();
    /** Started before the first run that needs it, shut down at the end; null until then. */
    @Nullable private HdfsCluster hdfs;

    private BackendComparisonBenchmark(Path tmp) {
        this.tmp = tmp;
    }

    public static void main(String[] args) {
        BenchmarkMain.run("BackendComparisonBenchmark", args, (tmp, results) -> new BackendComparisonBenchmark(tmp).run(results));
    }

    private int run(Path resultsDirectory) throws Exception {
        MachineDescription machine = MachineDescription.ofThisMachine();
        say("backend comparison: %d rounds x %s; machine: %d cpus, %s, load %s", ROUNDS,
                backends.stream().map(b -> b.label).toList(), machine.processors(), machine.cpuModel(),
                machine.loadAverage());
        say("job: %,d keys x %d slots x %d B = %s keyed state; throughput phase %,d records unlimited; "
                        + "restore phase %,d records at %,.0f/s, task failure after %d s, then a TaskManager loss",
                KEYS, PAYLOAD_SLOTS, PAYLOAD_BYTES, Stats.bytes((double) KEYS * PAYLOAD_SLOTS * PAYLOAD_BYTES),
                THROUGHPUT_RECORDS, RECORDS, RATE, FAIL_AFTER.toSeconds());
        try {
            for (Backend backend : backends) {
                warmUp(backend);
            }
            List<RunResult> runs = new ArrayList<>();
            for (int round = 1; round <= ROUNDS; round++) {
                for (Backend backend : backends) {
                    RunResult r = runOnce(backend, round);
                    runs.add(r);
                    say("%s round %d: %,.0f records/s steady (%,.0f to FINISHED); checkpoint median %s, p99 %s "
                                    + "(state %s, %s uploaded per checkpoint, %.1f CPU-s per checkpointed GiB); "
                                    + "task failure -> running %s (longest task restore %s); TaskManager loss -> "
                                    + "running %s (longest task restore %s); results %s",
                            backend.label, round, r.throughput().recordsPerSecond(),
                            r.throughput().recordsPerSecondToFinished(), Stats.millis(r.checkpointDurations().median()),
                            Stats.millis(r.checkpointDurations().p99()), Stats.bytes(r.checkpointStateSizes().median()),
                            Stats.bytes(r.checkpointedSizes().mean()), r.cpu().secondsPerCheckpointedGiB(),
                            Stats.millis(r.taskFailure().toRunningMillis()),
                            Stats.millis(r.taskFailure().longestTaskRestoreMillis()),
                            Stats.millis(r.taskManagerLoss().toRunningMillis()),
                            Stats.millis(r.taskManagerLoss().longestTaskRestoreMillis()),
                            r.resultsExact() ? "exact" : "WRONG");
                }
            }
            ComparisonReport report = new ComparisonReport("backend-comparison-" + STATE_SIZE, machine, COMMAND, parameters(),
                    backends.stream().map(b -> b.label).toList(), runs);
            List<Path> written = report.write(resultsDirectory);
            System.out.println();
            System.out.print(report.summaryTable());
            for (Path p : written) {
                say("wrote %s", p);
            }
            boolean allExact = runs.stream().allMatch(RunResult::resultsExact);
            if (!allExact) {
                say("SOME RUNS DELIVERED WRONG RESULTS: the numbers are not comparable");
            }
            return allExact ? 0 : 1;
        } finally {
            if (hdfs != null) {
                hdfs.close();
            }
        }
    }

    private RunResult runOnce(Backend backend, int round) throws Exception {
        Path runDir = Files.createTempDirectory(tmp, backend.isSr3() ? "s" : "b");
        String name = backend.label + "-" + round + "-" + runDir.getFileName();
        Configuration config = configuration(backend, runDir);
        say("--- %s, round %d", backend.label, round);
        TestingRing ring = backend.isSr3() ? TestingRing.start(config, RING_NODES, runDir.resolve("r")) : null;
        try (EmbeddedCluster cluster = EmbeddedCluster.start(config, TASK_MANAGERS, SLOTS_PER_TASK_MANAGER,
                runDir.resolve("f"))) {
            ThroughputPhase throughput = throughputPhase(cluster, config, name + "-throughput", THROUGHPUT_RECORDS);
            return new RestorePhase(this::say).run(cluster, ring, config, name + "-restore", backend.label, round,
                    throughput);
        } finally {
            if (ring != null) {
                ring.close();
            }
            deleteQuietly(runDir);
        }
    }

    /** A short rate-unlimited run whose numbers are thrown away. */
    private void warmUp(Backend backend) throws Exception {
        Path runDir = Files.createTempDirectory(tmp, "w");
        Configuration config = configuration(backend, runDir);
        say("--- warm-up (not measured): %s", backend.label);
        TestingRing ring = backend.isSr3() ? TestingRing.start(config, RING_NODES, runDir.resolve("r")) : null;
        try (EmbeddedCluster cluster = EmbeddedCluster.start(config, TASK_MANAGERS, SLOTS_PER_TASK_MANAGER,
                runDir.resolve("f"))) {
            throughputPhase(cluster, config, "warm-up-" + backend.label + "-" + runDir.getFileName(), WARM_UP_RECORDS);
        } finally {
            if (ring != null) {
                ring.close();
            }
            deleteQuietly(runDir);
        }
    }

    private Configuration configuration(Backend backend, Path runDir) throws IOException {
        Configuration base = FlinkSettings.common(CHECKPOINT_INTERVAL);
        return switch (backend) {
            case SR3, SR3_RF1 -> FlinkSettings.sr3(base, "bench/" + runDir.getFileName(), backend.replicationFactor);
            case FILE -> FlinkSettings.rocksDbOn(base, runDir.resolve("checkpoints").toUri().toString());
            case HDFS -> FlinkSettings.rocksDbOn(base, hdfs().uri() + "/checkpoints/" + runDir.getFileName());
        };
    }

    private HdfsCluster hdfs() throws IOException {
        if (hdfs == null) {
            say("starting a MiniDFSCluster: %d DataNodes, replication %d", HdfsCluster.DATA_NODES, HdfsCluster.DATA_NODES);
            hdfs = HdfsCluster.start(tmp.resolve("hdfs"));
            say("HDFS up at %s", hdfs.uri());
        }
        return hdfs;
    }

    /** The first phase's throughput, and whether its results were exact. */
    record ThroughputPhase(Throughput throughput, boolean exact) {}

    private ThroughputPhase throughputPhase(EmbeddedCluster cluster, Configuration config, String runId, long records)
            throws Exception {
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(records, 0).withKeys(KEYS)
                .withPayload(PAYLOAD_BYTES, PAYLOAD_SLOTS);
        try {
            JobProbe probe = JobProbe.submitAndAwaitRunning(cluster, TestJobs.jobGraph(config, spec, PARALLELISM));
            JobID jobId = probe.jobId();
            AccessExecutionGraph g = probe.graph();
            long running = JobProbe.lastSwitchToRunning(g);
            // the warm-up's input is shorter than the fill: its window starts at a third of it
            long from = records > FILL_RECORDS ? FILL_RECORDS : records / 3;
            SteadyWindow window = SteadyWindow.sample(RunRegistry.run(runId), from, (long) (STEADY_WINDOW_END * records),
                    PHASE_TIMEOUT);
            JobResult result = cluster.awaitResult(jobId, PHASE_TIMEOUT);
            if (!result.isSuccess()) {
                throw new IllegalStateException("Throughput job failed", result.getSerializedThrowable().orElse(null));
            }
            g = probe.graph();
            long finished = g.getStatusTimestamp(JobStatus.FINISHED);
            TestJobs.Verdict verdict = TestJobs.verify(spec);
            Throughput t = new Throughput(spec.records(), finished - running, window.records(), window.millis(),
                    JobProbe.completed(g));
            say("throughput: %,.0f records/s in the steady window (%,d records in %s), %,.0f records/s to FINISHED "
                            + "(%,d in %s), %d checkpoints, results %s", t.recordsPerSecond(), t.steadyRecords(),
                    Stats.millis(t.steadyMillis()), t.recordsPerSecondToFinished(), t.records(), Stats.millis(t.millis()),
                    t.checkpoints().size(), verdict.exact() ? "exact" : "WRONG: " + verdict.firstProblem());
            return new ThroughputPhase(t, verdict.exact());
        } finally {
            RunRegistry.remove(runId);
        }
    }

    private Map<String, Object> parameters() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("rounds", ROUNDS);
        p.put("order", "alternating: " + String.join(", then ", backends.stream().map(b -> b.label).toList())
                + " in every round");
        for (Backend b : backends) {
            p.put(b.label, b.description());
        }
        p.put("cluster", "embedded MiniCluster, " + TASK_MANAGERS + " TaskManagers x " + SLOTS_PER_TASK_MANAGER
                + " slot, parallelism " + PARALLELISM + ", fresh cluster (and ring) per run");
        p.put("checkpointInterval", CHECKPOINT_INTERVAL.toMillis() + " ms");
        p.put("keys", KEYS);
        p.put("payloadSlotsPerKey", PAYLOAD_SLOTS);
        p.put("payloadBytes", PAYLOAD_BYTES);
        p.put("keyedStateBytes", STATE_BYTES + " (" + Stats.bytes(STATE_BYTES) + ")");
        p.put("warmUp", "one untimed rate-unlimited run of " + WARM_UP_RECORDS + " records per backend before round 1");
        p.put("throughputPhaseRecords", THROUGHPUT_RECORDS);
        p.put("restorePhaseRecords", RECORDS);
        p.put("restorePhaseRecordsPerSecond", RATE);
        p.put("failureAfterMillis", FAIL_AFTER.toMillis());
        p.put("taskManagerLoss", "after the first checkpoint following the task failure's restore and "
                + CHECKPOINTS_BEFORE_TASK_MANAGER_LOSS + " more: the TaskManager with the most RocksDB instances is "
                + "closed and a fresh one started at once");
        p.put("steadyWindow", "records the keyed operator processed, sampled every "
                + THROUGHPUT_SAMPLE_INTERVAL.toMillis() + " ms, from the sample where every key's state exists to the "
                + "one where " + Math.round(STEADY_WINDOW_END * 100) + "% of the input is processed");
        p.put("restartStrategy", "fixed-delay, 200 ms");
        p.put("jvm", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()
                .stream().filter(a -> !a.startsWith("--add-")).toList()));
        return p;
    }

    private void say(String format, Object... args) {
        System.out.printf("[%6.1f s] %s%n", (System.currentTimeMillis() - start) / 1000.0, String.format(format, args));
    }

    private static void deleteQuietly(Path dir) {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (Exception ignored) {
            // best effort: target/ is cleaned by mvn clean anyway
        }
    }
}
