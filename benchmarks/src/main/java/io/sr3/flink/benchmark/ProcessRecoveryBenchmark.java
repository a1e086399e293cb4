package io.sr3.flink.benchmark;

import io.sr3.flink.cluster.ClusterJobs;
import io.sr3.flink.cluster.ClusterSpec;
import io.sr3.flink.cluster.ProcessCluster;
import io.sr3.flink.cluster.FlinkProcess;
import io.sr3.flink.cluster.RecoveryProbe;
import io.sr3.flink.harness.Json;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.ResultFiles;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Recovery after a TaskManager SIGKILL on a real multi-process cluster (JobManager + 4
 * TaskManagers as separate JVMs on 127.0.0.1, one slot each, job parallelism 3 so one slot is
 * spare), flink-sr3 against Flink's RocksDB backend with incremental {@code file://} checkpoints,
 * in one invocation, alternating A/B per round. Measured: SIGKILL to every task RUNNING again,
 * and SIGKILL to the first completed checkpoint after the restore (see {@link RecoveryProbe}).
 * Nothing here asserts a timing.
 *
 * <p>Usage: {@code mvn -B -q -pl benchmarks exec:exec@process-recovery-benchmark}; the only
 * argument is the results directory, where {@code process-recovery-<date>-<commit>.md} and {@code .json}
 * are written.
 */
public final class ProcessRecoveryBenchmark {

    static final int ROUNDS = 3;
    static final int TASK_MANAGERS = 4;
    static final int PARALLELISM = 3;
    static final Duration INTERVAL = Duration.ofMillis(1000);
    /** 1,024 keys x 8 slots x 1 KiB: 8 MiB of keyed state, filled after 8,192 records (4 s at 2,000/s). */
    static final TestJobSpec SPEC = TestJobSpec.of("process-recovery").withRecords(10_000_000, 2_000).withKeys(1024)
            .withPayload(1024, 8);
    static final String COMMAND = "mvn -B -q -pl benchmarks exec:exec@process-recovery-benchmark";

    private ProcessRecoveryBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("Usage: ProcessRecoveryBenchmark <results directory>");
            System.exit(2);
        }
        java.nio.file.Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        MachineDescription machine = MachineDescription.ofThisMachine();
        Path work = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().resolve("process-recovery");
        List<Map<String, Object>> runs = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            for (boolean sr3 : new boolean[] {true, false}) {
                runs.add(run(round, sr3, work.resolve((sr3 ? "sr3-" : "rocksdb-file-") + round)));
            }
        }
        write(Path.of(args[0]), machine, runs);
    }

    private static Map<String, Object> run(int round, boolean sr3, Path dir) throws Exception {
        String label = sr3 ? "flink-sr3" : "rocksdb-file";
        ClusterSpec spec = ClusterSpec.sr3(TASK_MANAGERS, 2).withCheckpointInterval(INTERVAL);
        if (!sr3) {
            spec = spec.asRocksDbFileBaseline();
        }
        try (ProcessCluster cluster = ProcessCluster.start(spec, dir)) {
            JobID job = cluster.submit(ClusterJobs.statefulJob(SPEC, PARALLELISM, dir.resolve("results"), INTERVAL, false,
                    null));
            cluster.awaitAllTasksRunning(job, Duration.ofSeconds(120));
            long start = System.nanoTime();
            Deadline.poll("keyed state to fill and three checkpoints", Duration.ofSeconds(120),
                    () -> System.nanoTime() - start > 8_000_000_000L && cluster.completedCheckpoints(job) >= 3);
            long stateSize = cluster.checkpoints(job).path("latest").path("completed").path("state_size").asLong();
            FlinkProcess victim = cluster.liveTaskManager(cluster.taskManagersRunning(job).get(0));
            RecoveryProbe.Recovery recovery = RecoveryProbe.killAndMeasure(cluster, job, victim, "", Duration.ofSeconds(180));
            say("round %d %-12s kill %s -> RUNNING %s, -> first checkpoint %s (state %s, restored from %s)", round, label,
                    victim.name(), Stats.millis(recovery.killToRunningMillis()), Stats.millis(recovery.killToCheckpointMillis()),
                    Stats.bytes(stateSize), recovery.restoredFrom());
            cluster.cancel(job);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("round", round);
            row.put("backend", label);
            row.put("stateSizeBytes", stateSize);
            row.put("killToRunningMillis", recovery.killToRunningMillis());
            row.put("killToFirstCheckpointMillis", recovery.killToCheckpointMillis());
            row.put("restoredFrom", recovery.restoredFrom());
            return row;
        }
    }

    private static void write(Path directory, MachineDescription machine, List<Map<String, Object>> runs) throws Exception {
        Files.createDirectories(directory);
        String base = ResultFiles.newBaseName(directory, "process-recovery");
        Map<String, Object> parameters = new LinkedHashMap<>();
        parameters.put("rounds", ROUNDS);
        parameters.put("order", "A/B alternating: flink-sr3 then rocksdb-file in every round, fresh cluster per run");
        parameters.put("cluster", "JobManager + " + TASK_MANAGERS + " TaskManagers as separate JVMs on 127.0.0.1, 1 slot "
                + "each, job parallelism " + PARALLELISM + " (one spare slot); a replacement TaskManager starts right after "
                + "the kill");
        parameters.put("backendA", "flink-sr3: Sr3StateBackendFactory, sr3.working-state=rocksdb, incremental, ring of the "
                + "4 TaskManagers' nodes, replication factor 2, JobManager as ring client");
        parameters.put("backendB", "Flink RocksDB (state.backend.type=rocksdb), incremental, "
                + "execution.checkpointing.storage=filesystem on a local file:// directory");
        parameters.put("checkpointIntervalMillis", INTERVAL.toMillis());
        parameters.put("keys", SPEC.keys());
        parameters.put("payloadBytes", SPEC.payloadBytes());
        parameters.put("payloadSlotsPerKey", SPEC.payloadSlots());
        parameters.put("recordsPerSecond", SPEC.recordsPerSecond());
        parameters.put("heartbeat", "interval 1 s, timeout 5 s; restart fixed-delay 500 ms");
        parameters.put("ringFailureDetector", "interval 250 ms, timeout 2 s");
        parameters.put("measurement", "REST polled every 20 ms: kill -> job and all tasks RUNNING (after the loss was "
                + "noticed); kill -> latest_ack_timestamp of the first checkpoint triggered after the restore");
        Map<String, Object> summary = new LinkedHashMap<>();
        StringBuilder table = new StringBuilder("| backend | kill->RUNNING median (min-max) | kill->1st checkpoint median (min-max) |\n|---|---|---|\n");
        for (String backend : List.of("flink-sr3", "rocksdb-file")) {
            List<Long> running = new ArrayList<>();
            List<Long> checkpoint = new ArrayList<>();
            for (Map<String, Object> run : runs) {
                if (backend.equals(run.get("backend"))) {
                    running.add((Long) run.get("killToRunningMillis"));
                    checkpoint.add((Long) run.get("killToFirstCheckpointMillis"));
                }
            }
            Stats r = Stats.of(running);
            Stats c = Stats.of(checkpoint);
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("killToRunningMedianMillis", r.median());
            s.put("killToFirstCheckpointMedianMillis", c.median());
            summary.put(backend, s);
            table.append(String.format("| %s | %s (%s-%s) | %s (%s-%s) |\n", backend, Stats.millis(r.median()),
                    Stats.millis(r.min()), Stats.millis(r.max()), Stats.millis(c.median()), Stats.millis(c.min()),
                    Stats.millis(c.max())));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", ProcessRecoveryBenchmark.class.getName());
        json.put("measuredAtUtc", Instant.now().toString());
        json.put("command", COMMAND);
        json.put("machine", machine.toMap());
        json.put("parameters", parameters);
        json.put("summary", summary);
        json.put("runs", runs);
        Path jsonFile = directory.resolve(base + ".json");
        Files.writeString(jsonFile, Json.write(json), StandardCharsets.UTF_8);

        StringBuilder md = new StringBuilder();
        md.append("# Recovery after a TaskManager SIGKILL: flink-sr3 vs Flink RocksDB on file://\n\n");
        md.append("Measured ").append(Instant.now().toString(), 0, 19).append(" UTC by `").append(ProcessRecoveryBenchmark.class.getName())
                .append("`; raw numbers in `").append(jsonFile.getFileName()).append("`.\n\n");
        md.append("Command (from the repository root, after `mvn -B -q install -DskipTests`):\n\n```\n").append(COMMAND).append("\n```\n\n");
        md.append("## Machine\n\n");
        machine.toMap().forEach((k, v) -> md.append("- ").append(k).append(": `").append(v).append("`\n"));
        md.append("\nThe machine is shared (other builds ran at the same time), so absolute numbers are noisy; runs "
                + "alternate A/B so that drift hits both sides.\n\n## Setup\n\n");
        parameters.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\n## Results\n\n").append(table).append("\n## Runs\n\n| round | backend | state | kill->RUNNING | kill->1st checkpoint |\n|---|---|---|---|---|\n");
        for (Map<String, Object> run : runs) {
            md.append(String.format("| %s | %s | %s | %s | %s |\n", run.get("round"), run.get("backend"),
                    Stats.bytes((Long) run.get("stateSizeBytes")), Stats.millis((Long) run.get("killToRunningMillis")),
                    Stats.millis((Long) run.get("killToFirstCheckpointMillis"))));
        }
        Path mdFile = directory.resolve(base + ".md");
        Files.writeString(mdFile, md.toString(), StandardCharsets.UTF_8);
        say("wrote %s and %s", mdFile, jsonFile);
    }

    private static void say(String format, Object... args) {
        System.out.println("[process-recovery] " + String.format(format, args));
        System.out.flush();
    }
}
