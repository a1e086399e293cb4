package io.sr3.flink.benchmark;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.cluster.ClusterJobs;
import io.sr3.flink.cluster.ClusterSpec;
import io.sr3.flink.cluster.ProcessCluster;
import io.sr3.flink.cluster.FlinkProcess;
import io.sr3.flink.cluster.RecoveryProbe;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.BurstSchedule;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Recovery after a TaskManager SIGKILL on a real multi-process cluster (JobManager + 4
 * TaskManagers as separate JVMs on 127.0.0.1, one slot each, job parallelism 3 so one slot is
 * spare), for three backends in one invocation, alternating A/B/C per round: flink-sr3, Flink's
 * RocksDB backend with incremental {@code file://} checkpoints, and the same on {@code hdfs://}
 * (a MiniDFSCluster in this JVM, started for the HDFS runs only). Nothing here asserts a timing.
 *
 * <p>The job's input arrives on a schedule from a fixed moment on, as records appended to a log
 * ({@code ScheduledTestJob.build}): a fill phase whose records are due faster than the
 * job can process them builds the keyed state ({@link #STATE_BYTES}), then a steady phase at
 * {@link #STEADY_RATE}. Once the job has processed the fill, is back at the present and a
 * checkpoint of the full state completed, one TaskManager running its tasks is killed. Measured:
 * kill to the loss noticed, to every task RUNNING, to caught up (the keyed operator's processing
 * lag, see {@link WatermarkLag}, back within {@link #CAUGHT_UP_LAG_MILLIS}: the backlog that
 * accumulated during the recovery is processed), and to the first checkpoint after the restore;
 * the restore phase of each subtask from Flink's task timestamps; restored bytes per second (the
 * restored checkpoint's state size over the longest subtask restore); for flink-sr3 the ring's
 * restore log lines (predicted against actual).
 *
 * <p>Usage: {@code mvn -B -q -pl benchmarks exec:exec@process-recovery-benchmark}
 * ({@code -Dsr3.bench.state-size=256m}, {@code -Dsr3.bench.recovery-rounds=1} for a shorter run);
 * the only argument is the results directory, where {@code process-recovery-<date>-<commit>.md}
 * and {@code .json} are written.
 */
public final class ProcessRecoveryBenchmark {

    /** The three backends, in the order every round runs them. */
    enum Backend {
        SR3("flink-sr3", "flink-sr3: Sr3StateBackendFactory, sr3.working-state=rocksdb, incremental, ring of the 4 "
                + "TaskManagers' nodes, replication factor 2, JobManager as ring client; ring connections "
                + "unauthenticated, as loopback allows (across hosts a ring needs the shared secret or TLS)"),
        FILE("rocksdb-file", "Flink RocksDB (state.backend.type=rocksdb), incremental, checkpoints on a local file:// "
                + "directory"),
        HDFS("rocksdb-hdfs", "Flink RocksDB, incremental, checkpoints on hdfs:// (flink-hadoop-fs on the processes' "
                + "classpath): a MiniDFSCluster (Hadoop 3.5.0) in the benchmark JVM, " + HdfsCluster.DATA_NODES
                + " DataNodes, replication " + HdfsCluster.DATA_NODES);

        final String label;
        final String description;

        Backend(String label, String description) {
            this.label = label;
            this.description = description;
        }
    }

    static final int ROUNDS = Integer.getInteger("sr3.bench.recovery-rounds", 2);
    static final int TASK_MANAGERS = 4;
    static final int PARALLELISM = 3;
    static final Duration INTERVAL = Duration.ofMillis(1000);
    /**
     * For every backend: a restarted subtask goes back to the slot it ran in when that slot is
     * still there (Flink's slot selection with recovery from local state), with no local backup
     * copy of any checkpoint, so no backend restores from a local copy. flink-sr3's TaskManagers
     * then hold every block their subtasks wrote.
     */
    static final Map<String, String> STICKY_SLOTS = Map.of(
            "execution.state-recovery.from-local", "true",
            "execution.checkpointing.local-backup.enabled", "false");

    /** Replica repair as a user runs it: the production defaults, which the test clusters shorten to 0 and 500 ms. */
    static final Duration REPAIR_DELAY = Sr3Options.REPAIR_DELAY.defaultValue();
    static final Duration REPAIR_INTERVAL = Sr3Options.REPAIR_INTERVAL.defaultValue();
    /** Keyed state the fill phase builds: keys x {@link #SLOTS} x {@link #PAYLOAD_BYTES}. */
    static final long STATE_BYTES = parseSize(System.getProperty("sr3.bench.state-size", "256m"));
    /** 4 KiB payloads: a quarter of the records of 1 KiB ones for the same state, so the source is not the limit. */
    static final int PAYLOAD_BYTES = 4096;
    static final int SLOTS = 4;
    static final int KEYS = (int) (STATE_BYTES / ((long) PAYLOAD_BYTES * SLOTS));
    /** One record per key and slot: every payload slot of every key written once. */
    static final long FILL_RECORDS = (long) KEYS * SLOTS;
    /** Far above what the job processes (a few thousand 4 KiB records/s here): the fill is a backlog. */
    static final double FILL_RATE = 50_000;
    /** {@code -Dsr3.bench.backends=flink-sr3,rocksdb-hdfs}: a subset, for a smoke run; all three by default. */
    static final List<String> BACKENDS = List.of(System.getProperty("sr3.bench.backends",
            "flink-sr3,rocksdb-file,rocksdb-hdfs").split(","));
    /**
     * The input rate after the fill (1 MiB/s of state updates): a fifth of what the job processes
     * with checkpoints on this machine (about 1,400 records/s, measured in the fill), so a backlog drains.
     */
    static final double STEADY_RATE = 250;
    static final long STEADY_MILLIS = Duration.ofMinutes(30).toMillis();
    static final BurstSchedule SCHEDULE = BurstSchedule.of(
            new BurstSchedule.Phase("fill", (long) Math.ceil(FILL_RECORDS * 1000 / FILL_RATE), FILL_RATE),
            new BurstSchedule.Phase("steady", STEADY_MILLIS, STEADY_RATE));
    /**
     * The job has caught up when its keyed operator processes records at most this long after they
     * were due: about four times the probe's resolution (watermark interval 200 ms plus metric
     * refresh 200 ms), above the steady lag on this loaded machine (up to about 1-3 s around
     * checkpoints). A draining backlog shrinks the lag by several seconds per second, so the
     * bound moves the caught-up moment by a fraction of a second.
     */
    static final long CAUGHT_UP_LAG_MILLIS = 2000;
    static final Duration FILL_TIMEOUT = Duration.ofMinutes(10);
    static final Duration RECOVERY_TIMEOUT = Duration.ofMinutes(5);
    static final String COMMAND = "mvn -B -q -pl benchmarks exec:exec@process-recovery-benchmark";

    private static final Pattern SR3_RESTORE = Pattern.compile("sr3 restore of .*?: (\\d+) bytes in (\\d+) blocks \\((\\d+) "
            + "local\\) from (\\d+) holder\\(s\\) by (\\w+) .*?predicted ([0-9.]+) s, actual ([0-9.]+) s");

    private ProcessRecoveryBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("Usage: ProcessRecoveryBenchmark <results directory>");
            System.exit(2);
        }
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        MachineDescription machine = MachineDescription.ofThisMachine();
        Path work = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().resolve("process-recovery");
        org.apache.flink.util.FileUtils.deleteDirectory(work.toFile()); // logs of an earlier invocation would be appended to
        say("%d round(s) x %s; %s of keyed state (%,d keys x %d x %d B), fill at %.0f/s then %.0f/s", ROUNDS,
                BACKENDS, Stats.bytes(STATE_BYTES), KEYS, SLOTS, PAYLOAD_BYTES, FILL_RATE, STEADY_RATE);
        long started = System.nanoTime();
        List<ProcessRecoveryRun> runs = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            for (Backend backend : Backend.values()) {
                if (!BACKENDS.contains(backend.label)) {
                    continue;
                }
                runs.add(run(round, backend, work.resolve(backend.label + "-" + round)));
                say("%d of %d runs done, %.1f min so far", runs.size(), ROUNDS * BACKENDS.size(),
                        (System.nanoTime() - started) / 60e9);
            }
        }
        Path[] files = ProcessRecoveryReport.write(Path.of(args[0]), machine, runs, (System.nanoTime() - started) / 60e9);
        say("wrote %s and %s", files[0], files[1]);
    }

    private static ProcessRecoveryRun run(int round, Backend backend, Path dir) throws Exception {
        HdfsCluster hdfs = null;
        try {
            Map<String, String> extra = new LinkedHashMap<>();
            extra.put("metrics.fetcher.update-interval", String.valueOf(WatermarkLag.FETCH_INTERVAL_MILLIS));
            extra.putAll(STICKY_SLOTS);
            ClusterSpec spec = ClusterSpec.sr3(TASK_MANAGERS, 2).withCheckpointInterval(INTERVAL);
            if (backend == Backend.SR3) {
                extra.put(Sr3Options.REPAIR_DELAY.key(), REPAIR_DELAY.toMillis() + " ms");
                extra.put(Sr3Options.REPAIR_INTERVAL.key(), REPAIR_INTERVAL.toMillis() + " ms");
            } else {
                spec = spec.asRocksDbFileBaseline();
            }
            if (backend == Backend.HDFS) {
                say("round %d %s: starting a MiniDFSCluster (%d DataNodes, replication %d)", round, backend.label,
                        HdfsCluster.DATA_NODES, HdfsCluster.DATA_NODES);
                hdfs = HdfsCluster.start(dir.resolve("hdfs"));
                extra.put("execution.checkpointing.dir", hdfs.uri() + "/flink-checkpoints");
                extra.put("flink.hadoop.dfs.replication", String.valueOf(HdfsCluster.DATA_NODES));
            }
            try (ProcessCluster cluster = ProcessCluster.start(spec.withExtraConfig(extra), dir)) {
                return measure(round, backend, cluster, dir);
            }
        } finally {
            if (hdfs != null) {
                hdfs.close();
            }
        }
    }

    private static ProcessRecoveryRun measure(int round, Backend backend, ProcessCluster cluster, Path dir) throws Exception {
        String who = "round " + round + " " + backend.label;
        TestJobSpec job = TestJobSpec.of("process-recovery-" + backend.label + "-" + round)
                .withRecords(SCHEDULE.records(), 0).withKeys(KEYS).withPayload(PAYLOAD_BYTES, SLOTS);
        long origin = System.currentTimeMillis();
        JobID id = cluster.submit(ClusterJobs.scheduledJob(job, SCHEDULE, origin, PARALLELISM, dir.resolve("results"),
                INTERVAL));
        cluster.awaitAllTasksRunning(id, Duration.ofSeconds(120));
        WatermarkLag lag = new WatermarkLag(cluster, id, "keyed-state", SCHEDULE, origin);

        long deadline = System.nanoTime() + FILL_TIMEOUT.toNanos();
        long nextSay = 0;
        long lagNow;
        while (lag.lastIndex() < FILL_RECORDS || (lagNow = lag.millis()) > CAUGHT_UP_LAG_MILLIS) {
            lagNow = lag.millis();
            if (System.nanoTime() - nextSay > 0) {
                nextSay = System.nanoTime() + 10_000_000_000L;
                JsonNode latest = cluster.checkpoints(id).path("latest").path("completed");
                say("%s: filling, %,d of %,d fill records processed, lag %s, %d checkpoints, latest %s", who,
                        Math.max(0, lag.lastIndex()), FILL_RECORDS, lagNow == Long.MAX_VALUE ? "n/a" : Stats.millis(lagNow),
                        cluster.completedCheckpoints(id), Stats.bytes(latest.path("state_size").asLong()));
            }
            failIfNotRunning(cluster, id, deadline, "the fill to be processed");
            LockSupport.parkNanos(200_000_000L);
        }
        long filledAt = System.currentTimeMillis();
        say("%s: fill processed after %s, lag %s; waiting for a checkpoint triggered after it", who,
                Stats.millis(filledAt - origin), Stats.millis(lagNow));
        Deadline.poll("a checkpoint of the full state", FILL_TIMEOUT, () -> cluster.checkpoints(id).path("latest")
                .path("completed").path("trigger_timestamp").asLong() > filledAt);
        JsonNode beforeKill = cluster.checkpoints(id).path("latest").path("completed");
        long stateSize = beforeKill.path("state_size").asLong();
        // Kill from the present, not from a momentary lag around a checkpoint.
        Deadline.poll("the job to be within the caught-up lag", FILL_TIMEOUT,
                () -> lag.millis() <= CAUGHT_UP_LAG_MILLIS);
        long lagBeforeKill = lag.millis();
        FlinkProcess victim = cluster.liveTaskManager(cluster.taskManagersRunning(id).get(0));
        say("%s: state %s, lag %s; SIGKILL %s", who, Stats.bytes(stateSize), Stats.millis(lagBeforeKill), victim);

        List<long[]> lagSamples = new ArrayList<>(); // epoch millis, lag
        RecoveryProbe.Lag tracedLag = () -> {
            long millis = lag.millis();
            lagSamples.add(new long[] {System.currentTimeMillis(), millis});
            return millis;
        };
        RecoveryProbe.Recovery r = RecoveryProbe.killAndMeasure(cluster, id, victim, "", RECOVERY_TIMEOUT, tracedLag,
                CAUGHT_UP_LAG_MILLIS);
        List<long[]> lagTrace = lagTrace(lagSamples, r);
        long[] phases = taskPhases(cluster, id, r.killedAtMillis());
        long restoredSize = restoredStateSize(cluster, id, r.restoredCheckpointId(), beforeKill);
        double bytesPerSecond = phases[2] > 0 && restoredSize >= 0 ? restoredSize * 1000.0 / phases[2] : Double.NaN;
        Map<String, Object> sr3 = backend == Backend.SR3 ? sr3RestoreLines(cluster, id) : Map.of();
        say("%s: detected %s, deployed %s, longest restore %s (%s/s), RUNNING %s, caught up %s, first checkpoint %s%s",
                who, Stats.millis(r.killToDetectedMillis()), Stats.millis(phases[1]), Stats.millis(phases[2]),
                Stats.bytes(bytesPerSecond), Stats.millis(r.killToRunningMillis()), Stats.millis(r.killToCaughtUpMillis()),
                Stats.millis(r.killToCheckpointMillis()), sr3.isEmpty() ? "" : "; sr3 restore log: " + sr3);
        say("%s: lag after RUNNING (s after the kill: lag): %s", who, lagTrace.stream()
                .map(p -> String.format("%.1f: %s", p[0] / 1000.0, Stats.millis(p[1]))).collect(Collectors.joining(", ")));
        cluster.cancel(id);
        return new ProcessRecoveryRun(round, backend.label, r.victim(), stateSize, restoredSize, r.restoredFrom(),
                filledAt - origin, lagBeforeKill, r.killToDetectedMillis(), phases[0], phases[1], phases[2],
                r.killToRunningMillis(), r.killToCaughtUpMillis(), r.killToCheckpointMillis(), bytesPerSecond, sr3,
                lagTrace);
    }

    /**
     * The lag samples from every task RUNNING until caught up, as milliseconds after the kill and
     * the lag, at most one per 200 ms (the watermarks' and metrics' refresh), and the caught-up one.
     */
    private static List<long[]> lagTrace(List<long[]> samples, RecoveryProbe.Recovery r) {
        List<long[]> trace = new ArrayList<>();
        long next = r.killToRunningMillis();
        for (long[] sample : samples) {
            long afterKill = sample[0] - r.killedAtMillis();
            boolean caughtUp = sample[1] <= CAUGHT_UP_LAG_MILLIS;
            if ((afterKill >= next || caughtUp) && afterKill >= r.killToRunningMillis() && sample[1] != Long.MAX_VALUE) {
                trace.add(new long[] {afterKill, sample[1]});
                next = afterKill + 200;
            }
            if (caughtUp && afterKill >= r.killToRunningMillis()) {
                break;
            }
        }
        return trace;
    }

    /** The restored checkpoint's state size: the latest before the kill (as a rule), else from the history; -1 if unknown. */
    private static long restoredStateSize(ProcessCluster cluster, JobID id, long checkpointId, JsonNode latestBeforeKill) {
        if (latestBeforeKill.path("id").asLong() == checkpointId) {
            return latestBeforeKill.path("state_size").asLong();
        }
        for (JsonNode checkpoint : cluster.checkpoints(id).path("history")) {
            if (checkpoint.path("id").asLong() == checkpointId) {
                return checkpoint.path("state_size").asLong(-1);
            }
        }
        JsonNode details = cluster.getJson("/jobs/" + id + "/checkpoints/details/" + checkpointId);
        return details == null ? -1 : details.path("state_size").asLong(-1);
    }

    private static void failIfNotRunning(ProcessCluster cluster, JobID id, long deadlineNanos, String what) {
        String status = cluster.jobStatus(id);
        if (List.of("FAILED", "FINISHED", "CANCELED").contains(status)) {
            throw new IllegalStateException("Job " + id + " is " + status + " while waiting for " + what + ": "
                    + cluster.exceptions(id));
        }
        if (System.nanoTime() - deadlineNanos > 0) {
            throw new IllegalStateException("Timed out waiting for " + what + " of job " + id);
        }
    }

    /**
     * From the current attempts' state timestamps over all vertices: the earliest CREATED and the
     * latest INITIALIZING after the kill, and the longest INITIALIZING to RUNNING of a subtask.
     */
    private static long[] taskPhases(ProcessCluster cluster, JobID id, long killedAtMillis) {
        long created = Long.MAX_VALUE;
        long initializing = 0;
        long restore = 0;
        for (JsonNode vertex : cluster.getJson("/jobs/" + id).path("vertices")) {
            JsonNode times = cluster.getJson("/jobs/" + id + "/vertices/" + vertex.path("id").asText() + "/subtasktimes");
            for (JsonNode subtask : times == null ? List.<JsonNode>of() : times.path("subtasks")) {
                JsonNode t = subtask.path("timestamps");
                created = Math.min(created, t.path("CREATED").asLong(Long.MAX_VALUE));
                initializing = Math.max(initializing, t.path("INITIALIZING").asLong());
                if (t.path("RUNNING").asLong() > 0 && t.path("INITIALIZING").asLong() > 0) {
                    restore = Math.max(restore, t.path("RUNNING").asLong() - t.path("INITIALIZING").asLong());
                }
            }
        }
        return new long[] {created == Long.MAX_VALUE ? -1 : created - killedAtMillis,
                initializing == 0 ? -1 : initializing - killedAtMillis, restore};
    }

    /**
     * The sr3 restore log lines of the live TaskManagers for this job (only restores write them;
     * Flink names the restore directory after the job), summed.
     */
    private static Map<String, Object> sr3RestoreLines(ProcessCluster cluster, JobID job) throws IOException {
        String jobTag = "job_" + job + "_";
        long lines = 0;
        long bytes = 0;
        long blocks = 0;
        long local = 0;
        double predicted = 0;
        double actual = 0;
        double longestActual = 0;
        double predictedOfLongest = 0;
        Map<String, Integer> structures = new LinkedHashMap<>();
        for (FlinkProcess tm : cluster.liveTaskManagers()) {
            Path log = tm.directory().resolve(tm.name() + ".log");
            if (!Files.exists(log)) {
                continue;
            }
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                Matcher m = SR3_RESTORE.matcher(line);
                if (!line.contains(jobTag) || !m.find()) {
                    continue;
                }
                lines++;
                bytes += Long.parseLong(m.group(1));
                blocks += Long.parseLong(m.group(2));
                local += Long.parseLong(m.group(3));
                structures.merge(m.group(5), 1, Integer::sum);
                double p = Double.parseDouble(m.group(6));
                double a = Double.parseDouble(m.group(7));
                predicted += p;
                actual += a;
                if (a > longestActual) {
                    longestActual = a;
                    predictedOfLongest = p;
                }
            }
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("lines", lines);
        summary.put("bytes", bytes);
        summary.put("blocks", blocks);
        summary.put("localBlocks", local);
        summary.put("structures", structures);
        summary.put("predictedSecondsSum", predicted);
        summary.put("actualSecondsSum", actual);
        summary.put("longestActualSeconds", longestActual);
        summary.put("predictedSecondsOfLongest", predictedOfLongest);
        return summary;
    }

    static long parseSize(@Nullable String text) {
        String t = text == null ? "" : text.trim().toLowerCase(java.util.Locale.ROOT);
        long unit = t.endsWith("g") ? 1L << 30 : t.endsWith("m") ? 1L << 20 : 1;
        long value = Long.parseLong(unit == 1 ? t : t.substring(0, t.length() - 1));
        if (value < 1) {
            throw new IllegalArgumentException("sr3.bench.state-size must be positive, was " + text);
        }
        return value * unit;
    }

    static void say(String format, Object... args) {
        System.out.println("[process-recovery] " + String.format(format, args));
        System.out.flush();
    }
}
