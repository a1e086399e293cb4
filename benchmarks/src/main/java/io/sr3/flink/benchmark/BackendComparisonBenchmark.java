package io.sr3.flink.benchmark;

import io.sr3.flink.harness.BenchmarkMain;
import io.sr3.flink.harness.FlinkSettings;
import io.sr3.flink.harness.JobProbe.CheckpointRecord;
import io.sr3.flink.harness.JobProbe;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.harness.TestJobs;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.EmbeddedCluster;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobmaster.JobResult;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * flink-sr3 against Flink's RocksDB backend with {@code file://} checkpoints, on the same job with
 * the same parameters, in one invocation: runs alternate A/B/A/B so that drift of a shared
 * machine hits both sides alike.
 *
 * <p>Every run starts a fresh MiniCluster (and, for flink-sr3, a fresh 3-node ring) and executes:
 * <ol>
 *   <li><b>throughput</b>: {@link io.sr3.flink.testjob.StatefulTestJob} with a rate-unlimited source; records/s from
 *       the last subtask RUNNING to FINISHED, checkpointing every {@link #CHECKPOINT_INTERVAL};
 *   <li><b>checkpoints and restore</b>: the same job at a fixed rate; once the keyed state is full
 *       and a few checkpoints completed, one failure is injected (the job's own
 *       {@code FailureInjector}, armed from here); checkpoint durations come from Flink's checkpoint
 *       statistics, restore times from task state timestamps.
 * </ol>
 * Both phases must deliver exactly the expected per-key results. Nothing here asserts a timing.
 *
 * <p>Usage: {@code mvn -B -q -pl benchmarks exec:exec@backend-benchmark}; the only argument is the
 * results directory, where {@code backend-comparison-<date>-<commit>.md} and {@code .json} are written.
 */
public final class BackendComparisonBenchmark {

    /** The compared backends, in the order they run in every round; flink-sr3 is compared with each other one. */
    enum Backend {
        SR3("flink-sr3", "flink-sr3: Sr3StateBackendFactory, sr3.working-state=rocksdb, incremental, "
                + "checkpoints on 3 in-JVM ring nodes (loopback), replication factor 2"),
        FILE("rocksdb-file", "Flink RocksDB (state.backend.type=rocksdb), incremental, "
                + "execution.checkpointing.storage=filesystem on a local file:// directory"),
        HDFS("rocksdb-hdfs", "Flink RocksDB, incremental, checkpoints on hdfs:// (flink-hadoop-fs): an in-JVM "
                + "MiniDFSCluster (Hadoop 3.5.0) with 3 DataNodes and replication 3");

        final String label;
        final String description;

        Backend(String label, String description) {
            this.label = label;
            this.description = description;
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
    static final int REPLICATION_FACTOR = 2;
    static final Duration CHECKPOINT_INTERVAL = Duration.ofSeconds(2);

    /** 16,384 keys x 8 slots x 1 KiB of incompressible payload: 128 MiB of keyed state. */
    static final int KEYS = 16_384;
    static final int PAYLOAD_SLOTS = 8;
    static final int PAYLOAD_BYTES = 1024;

    /** Rate-unlimited phase: 3x the records that fill the state, so it also measures updates. */
    static final long THROUGHPUT_RECORDS = 400_000;
    /** One untimed rate-unlimited run per backend first, so that JIT warm-up does not count against run 1. */
    static final long WARM_UP_RECORDS = 150_000;

    /**
     * Checkpoint/restore phase: 8,000 records/s fill the state after 16.4 s; the failure comes at
     * 30 s (about 6 checkpoints of the full state before it); the input lasts 40 s.
     */
    static final double RATE = 8_000;
    static final long RECORDS = 320_000;
    static final Duration FAIL_AFTER = Duration.ofSeconds(30);
    static final int MIN_CHECKPOINTS_BEFORE_FAILURE = 3;

    static final Duration PHASE_TIMEOUT = Duration.ofMinutes(4);
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
                        + "restore phase %,d records at %,.0f/s, failure after %d s",
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
                    say("%s round %d: %,.0f records/s; checkpoint median %s, p99 %s (state %s, %s uploaded per "
                                    + "checkpoint, %.1f CPU-s per checkpointed GiB); failure -> running %s, -> first "
                                    + "checkpoint %s; results %s",
                            backend.label, round, r.recordsPerSecond(), Stats.millis(r.checkpointDurations().median()),
                            Stats.millis(r.checkpointDurations().p99()), Stats.bytes(r.checkpointStateSizes().median()),
                            Stats.bytes(r.checkpointedSizes().mean()), r.cpuSecondsPerCheckpointedGiB(),
                            Stats.millis(r.failureToRunningMillis()), Stats.millis(r.failureToFirstCheckpointMillis()),
                            r.resultsExact() ? "exact" : "WRONG");
                }
            }
            ComparisonReport report = new ComparisonReport(machine, COMMAND, parameters(),
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
        Path runDir = Files.createTempDirectory(tmp, backend == Backend.SR3 ? "s" : "b");
        String name = backend.label + "-" + round + "-" + runDir.getFileName();
        Configuration config = configuration(backend, runDir);
        say("--- %s, round %d", backend.label, round);
        TestingRing ring = backend == Backend.SR3 ? TestingRing.start(config, RING_NODES, runDir.resolve("r")) : null;
        try (EmbeddedCluster cluster = EmbeddedCluster.start(config, TASK_MANAGERS, SLOTS_PER_TASK_MANAGER,
                runDir.resolve("f"))) {
            Throughput throughput = throughputPhase(cluster, config, name + "-throughput", THROUGHPUT_RECORDS);
            return restorePhase(cluster, ring, config, name + "-restore", backend, round, throughput);
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
        TestingRing ring = backend == Backend.SR3 ? TestingRing.start(config, RING_NODES, runDir.resolve("r")) : null;
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
            case SR3 -> FlinkSettings.sr3(base, "bench/" + runDir.getFileName(), REPLICATION_FACTOR);
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

    private record Throughput(long records, long millis, List<CheckpointRecord> checkpoints, boolean exact) {}

    private Throughput throughputPhase(EmbeddedCluster cluster, Configuration config, String runId, long records)
            throws Exception {
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(records, 0).withKeys(KEYS)
                .withPayload(PAYLOAD_BYTES, PAYLOAD_SLOTS);
        try {
            JobID jobId = cluster.submit(TestJobs.jobGraph(config, spec, PARALLELISM));
            JobProbe probe = new JobProbe(cluster, jobId);
            AccessExecutionGraph g = probe.await("all tasks running", Duration.ofSeconds(60), Duration.ofMillis(20),
                    JobProbe::allRunning);
            long running = JobProbe.lastSwitchToRunning(g);
            JobResult result = cluster.awaitResult(jobId, PHASE_TIMEOUT);
            if (!result.isSuccess()) {
                throw new IllegalStateException("Throughput job failed", result.getSerializedThrowable().orElse(null));
            }
            g = probe.graph();
            long finished = g.getStatusTimestamp(JobStatus.FINISHED);
            TestJobs.Verdict verdict = TestJobs.verify(spec);
            Throughput t = new Throughput(spec.records(), finished - running, JobProbe.completed(g), verdict.exact());
            say("throughput: %,d records in %s = %,.0f records/s, %d checkpoints, results %s", t.records(),
                    Stats.millis(t.millis()), t.records() * 1000.0 / t.millis(), t.checkpoints().size(),
                    verdict.exact() ? "exact" : "WRONG: " + verdict.firstProblem());
            return t;
        } finally {
            RunRegistry.remove(runId);
        }
    }

    private RunResult restorePhase(EmbeddedCluster cluster, @Nullable TestingRing ring, Configuration config,
            String runId, Backend backend, int round, Throughput throughput) throws Exception {
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(RECORDS, RATE).withKeys(KEYS)
                .withPayload(PAYLOAD_BYTES, PAYLOAD_SLOTS).withFailure(TestJobSpec.FailureMode.WHEN_ARMED, 0);
        long fillMillis = (long) (1000.0 * KEYS * PAYLOAD_SLOTS / RATE);
        try {
            JobID jobId = cluster.submit(TestJobs.jobGraph(config, spec, PARALLELISM));
            JobProbe probe = new JobProbe(cluster, jobId);
            AccessExecutionGraph g = probe.await("all tasks running", Duration.ofSeconds(60), Duration.ofMillis(20),
                    JobProbe::allRunning);
            long running = JobProbe.lastSwitchToRunning(g);
            long cpuAtRunning = processCpuNanos();
            g = probe.await("state full and " + MIN_CHECKPOINTS_BEFORE_FAILURE + " checkpoints", PHASE_TIMEOUT,
                    Duration.ofMillis(100),
                    graph -> System.currentTimeMillis() - running >= FAIL_AFTER.toMillis()
                            && JobProbe.completedCheckpoints(graph) >= MIN_CHECKPOINTS_BEFORE_FAILURE);
            int attemptBefore = JobProbe.attempt(g);
            long[] ringBytes = ring == null ? new long[0] : ring.bytesStoredPerNode();
            long cpuUntilFailure = processCpuNanos() - cpuAtRunning;
            long armed = System.currentTimeMillis();
            long checkpointedBeforeFailure = 0;
            for (CheckpointRecord c : JobProbe.completed(g)) {
                if (c.triggerTimestamp() >= running) {
                    checkpointedBeforeFailure += c.checkpointedSize();
                }
            }
            RunRegistry.run(runId).armFailure();
            g = probe.await("the restart after the injected failure", Duration.ofSeconds(120), Duration.ofMillis(20),
                    graph -> JobProbe.attempt(graph) > attemptBefore && JobProbe.allRunning(graph));
            long failure = JobProbe.earliestFailure(g, armed - 1);
            if (failure == 0) {
                failure = armed;
            }
            long runningAgain = JobProbe.lastSwitchToRunning(g);
            long taskRestore = JobProbe.longestInitializationMillis(g);
            RestoredCheckpointStats restored = JobProbe.restored(g);
            g = probe.await("a checkpoint after the restore", Duration.ofSeconds(60), Duration.ofMillis(20),
                    graph -> firstCheckpointAfter(graph, runningAgain) != null);
            CheckpointRecord firstAfter = firstCheckpointAfter(g, runningAgain);
            long firstCheckpointDone = firstAfter.triggerTimestamp() + firstAfter.endToEndMillis();

            JobResult result = cluster.awaitResult(jobId, PHASE_TIMEOUT);
            g = probe.graph();
            TestJobs.Verdict verdict = TestJobs.verify(spec);
            boolean exact = result.isSuccess() && verdict.exact() && throughput.exact();
            long failureTime = failure;
            List<CheckpointRecord> fullState = JobProbe.completed(g).stream()
                    .filter(c -> c.triggerTimestamp() >= running + fillMillis && c.triggerTimestamp() < failureTime)
                    .toList();
            long ringWritten = 0;
            if (ring != null) {
                for (int i = 0; i < ring.size(); i++) {
                    ringWritten += TestingRing.metrics(ring.node(i)).bytesWritten();
                }
            }
            say("restore: checkpoint %s (%s) restored; failure -> all running %s (longest task restore %s), "
                            + "-> first checkpoint %s; results %s",
                    restored == null ? "NONE" : restored.getCheckpointId(),
                    restored == null ? "-" : Stats.bytes(restored.getStateSize()), Stats.millis(runningAgain - failure),
                    Stats.millis(taskRestore), Stats.millis(firstCheckpointDone - failure),
                    verdict.exact() ? "exact" : "WRONG: " + verdict.firstProblem());
            return new RunResult(backend.label, round, throughput.records(), throughput.millis(), throughput.checkpoints(),
                    fullState, restored == null ? -1 : restored.getCheckpointId(),
                    restored == null ? 0 : restored.getStateSize(), runningAgain - failure, taskRestore,
                    firstCheckpointDone - failure, exact, ringBytes, ringWritten, cpuUntilFailure,
                    checkpointedBeforeFailure);
        } finally {
            RunRegistry.remove(runId);
        }
    }

    @Nullable
    private static CheckpointRecord firstCheckpointAfter(AccessExecutionGraph g, long timestamp) {
        for (CheckpointRecord c : JobProbe.completed(g)) {
            if (c.triggerTimestamp() >= timestamp) {
                return c;
            }
        }
        return null;
    }

    private Map<String, Object> parameters() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("rounds", ROUNDS);
        p.put("order", "alternating: " + String.join(", then ", backends.stream().map(b -> b.label).toList())
                + " in every round");
        for (Backend b : backends) {
            p.put(b.label, b.description);
        }
        p.put("cluster", "embedded MiniCluster, " + TASK_MANAGERS + " TaskManagers x " + SLOTS_PER_TASK_MANAGER
                + " slot, parallelism " + PARALLELISM + ", fresh cluster (and ring) per run");
        p.put("checkpointInterval", CHECKPOINT_INTERVAL.toMillis() + " ms");
        p.put("keys", KEYS);
        p.put("payloadSlotsPerKey", PAYLOAD_SLOTS);
        p.put("payloadBytes", PAYLOAD_BYTES);
        p.put("keyedStateBytes", (long) KEYS * PAYLOAD_SLOTS * PAYLOAD_BYTES);
        p.put("warmUp", "one untimed rate-unlimited run of " + WARM_UP_RECORDS + " records per backend before round 1");
        p.put("throughputPhaseRecords", THROUGHPUT_RECORDS);
        p.put("restorePhaseRecords", RECORDS);
        p.put("restorePhaseRecordsPerSecond", RATE);
        p.put("failureAfterMillis", FAIL_AFTER.toMillis());
        p.put("restartStrategy", "fixed-delay, 200 ms");
        p.put("jvm", String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
                .stream().filter(a -> !a.startsWith("--add-")).toList()));
        return p;
    }

    /** CPU time of this whole JVM so far: every thread, kernel time and the garbage collector included. */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
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
