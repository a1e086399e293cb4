package io.sr3.flink.demo;

import io.sr3.flink.harness.FlinkSettings;
import io.sr3.flink.harness.JobProbe.CheckpointRecord;
import io.sr3.flink.harness.JobProbe;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.harness.TestJobs;
import io.sr3.flink.node.RingNode;
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
import org.apache.flink.runtime.util.EnvironmentInformation;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * flink-sr3 in one minute: a stateful job checkpoints to a ring of three storage nodes, loses the
 * ring node with the most replicas and a TaskManager at the same moment, restores from the
 * surviving replicas and still produces exactly the expected result.
 *
 * <p>Run with {@code mvn -B -q -pl benchmarks exec:exec@demo} after {@code mvn -B -q install -DskipTests}, or
 * on Flink 1.20 in one reactor build, without installing: {@code mvn -B -q -Pflink-1.20 clean package -DskipTests
 * exec:exec@demo}.
 * Exit code 0 only if the job restored from a checkpoint and its result matched the expectation
 * key by key. Flink's and sr3's logs go to {@code benchmarks/target/demo-tmp/sr3.log}.
 *
 * <p>The constants keep the whole run well under two minutes on a 2-core machine while the state
 * (4,096 keys x 8 slots x 1 KiB = 32 MiB) is large enough that checkpoints span many ring blocks.
 */
public final class Sr3Demo {

    private static final int TASK_MANAGERS = 3;
    private static final int SLOTS_PER_TASK_MANAGER = 2;
    /** 4 of 6 slots: spread over the 3 TaskManagers, and the 4 slots of the 2 survivors are enough after the kill. */
    private static final int PARALLELISM = 4;
    private static final int RING_NODES = 3;
    private static final int REPLICATION_FACTOR = 2;
    private static final Duration CHECKPOINT_INTERVAL = Duration.ofSeconds(1);

    private static final int KEYS = 4096;
    private static final int PAYLOAD_BYTES = 1024;
    private static final int PAYLOAD_SLOTS = 8;
    private static final double RECORDS_PER_SECOND = 4000;
    /** 30 s of input at the rate above; every slot of every key is written after 8.2 s. */
    private static final long RECORDS = 120_000;
    /** The failure comes once every slot exists and a few checkpoints of the full state completed. */
    private static final Duration KILL_AFTER = Duration.ofSeconds(12);
    private static final int MIN_CHECKPOINTS_BEFORE_KILL = 4;

    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(2);
    /** How often the job's graph is read while the demo waits and reports progress. */
    private static final Duration PROGRESS_POLL = Duration.ofMillis(100);
    /** Far past either phase (the input lasts 30 s): only a stuck job reaches it. */
    private static final Duration PHASE_TIMEOUT = Duration.ofMinutes(5);

    private final long start = System.currentTimeMillis();

    public static void main(String[] args) throws Exception {
        int code;
        try {
            code = new Sr3Demo().run();
        } catch (Throwable t) {
            System.out.println();
            System.out.println("DEMO FAILED: " + t);
            t.printStackTrace(System.out);
            code = 2;
        }
        System.out.flush();
        // Flink and Netty leave non-daemon threads behind; the demo is over.
        System.exit(code);
    }

    private int run() throws Exception {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
        Files.createDirectories(tmp);
        Path runDir = Files.createTempDirectory(tmp, "sr3-demo-");
        String runId = "sr3-demo-" + runDir.getFileName();

        Configuration config = FlinkSettings.sr3(FlinkSettings.common(CHECKPOINT_INTERVAL),
                "sr3-demo/" + runDir.getFileName(), REPLICATION_FACTOR);
        TestJobSpec spec = TestJobSpec.of(runId)
                .withRecords(RECORDS, RECORDS_PER_SECOND)
                .withKeys(KEYS)
                .withPayload(PAYLOAD_BYTES, PAYLOAD_SLOTS);

        System.out.println("flink-sr3 demo: checkpoints on a ring of storage nodes, then a ring node and a TaskManager die");
        System.out.printf("  cluster : embedded Flink %s MiniCluster, %d TaskManagers x %d slots, job parallelism %d%n",
                EnvironmentInformation.getVersion(), TASK_MANAGERS, SLOTS_PER_TASK_MANAGER, PARALLELISM);
        System.out.printf("  backend : %s, sr3.working-state=rocksdb (incremental), checkpoints to %s every %s%n",
                config.getString("state.backend.type", "?"), config.getString("execution.checkpointing.dir", "?"),
                Stats.millis(CHECKPOINT_INTERVAL.toMillis()));
        System.out.printf("  job     : %,d records at %,.0f/s over %,d keys; keyed state ~%s (Value, List, Map state + timers)%n",
                RECORDS, RECORDS_PER_SECOND, KEYS, Stats.bytes(spec.approximateStateBytes()));
        System.out.println("  logs    : " + tmp.resolve("sr3.log"));

        try (TestingRing ring = TestingRing.start(config, RING_NODES, runDir.resolve("ring"));
                EmbeddedCluster cluster = EmbeddedCluster.start(config, TASK_MANAGERS, SLOTS_PER_TASK_MANAGER,
                        runDir.resolve("flink"))) {
            StringBuilder nodes = new StringBuilder();
            for (int i = 0; i < ring.size(); i++) {
                nodes.append(i == 0 ? "" : ", ").append(ring.name(i));
            }
            System.out.printf("  ring    : %d nodes in this JVM over loopback, replication factor %d: %s%n",
                    ring.size(), REPLICATION_FACTOR, nodes);
            System.out.println();
            try {
                return runJob(cluster, ring, config, spec);
            } finally {
                RunRegistry.remove(runId);
            }
        }
    }

    private int runJob(EmbeddedCluster cluster, TestingRing ring, Configuration config, TestJobSpec spec)
            throws Exception {
        JobID jobId = cluster.submit(TestJobs.jobGraph(config, spec, PARALLELISM));
        JobProbe probe = new JobProbe(cluster, jobId);
        AccessExecutionGraph g = probe.await("all tasks running", Duration.ofSeconds(60), Duration.ofMillis(50),
                JobProbe::allRunning);
        long runningSince = JobProbe.lastSwitchToRunning(g);
        say("job %s running (all %d subtasks)", jobId, countSubtasks(g));

        // ---- phase 1: run, checkpoint, watch the ring fill up
        long[] nextProgress = {0};
        g = probe.await("the moment of the failure (" + MIN_CHECKPOINTS_BEFORE_KILL + " checkpoints, " + KILL_AFTER
                + " running)", PHASE_TIMEOUT, PROGRESS_POLL, graph -> {
                    nextProgress[0] = progressIfDue(graph, ring, nextProgress[0]);
                    return JobProbe.completedCheckpoints(graph) >= MIN_CHECKPOINTS_BEFORE_KILL
                            && System.currentTimeMillis() - runningSince >= KILL_AFTER.toMillis();
                });
        progress(g, ring);
        CheckpointRecord lastBefore = JobProbe.latestCompleted(g);
        long checkpointsBefore = JobProbe.completedCheckpoints(g);
        int attemptBefore = JobProbe.attempt(g);

        // ---- the failure: the ring node with the most replicas and a TaskManager, at once
        long[] bytesAtKill = ring.bytesStoredPerNode();
        int victimNode = ring.indexHoldingMost();
        int victimTaskManager = cluster.taskManagerWithMostStateInstances(jobId);
        List<TestingRing.MetricsSnapshot> metricsAtKill = new ArrayList<>();
        for (int i = 0; i < ring.size(); i++) {
            metricsAtKill.add(TestingRing.metrics(ring.node(i)));
        }
        System.out.println();
        say("FAILURE: stopping ring node %s (holds the most: %s) and killing TaskManager %d (hosts the most RocksDB instances)",
                ring.shortName(victimNode), Stats.bytes(bytesAtKill[victimNode]), victimTaskManager);
        long killTime = System.currentTimeMillis();
        ring.node(victimNode).close();
        cluster.terminateTaskManager(victimTaskManager);

        g = probe.await("the job to restart and all tasks to run again", Duration.ofSeconds(60), Duration.ofMillis(20),
                graph -> JobProbe.attempt(graph) > attemptBefore && JobProbe.allRunning(graph));
        long runningAgain = JobProbe.lastSwitchToRunning(g);
        long restoreInTasks = JobProbe.longestInitializationMillis(g);
        RestoredCheckpointStats restored = JobProbe.restored(g);
        say("restored from checkpoint %s and running again: %s after the kill (longest state restore in a task: %s)",
                restored == null ? "NONE" : Long.toString(restored.getCheckpointId()),
                Stats.millis(runningAgain - killTime), Stats.millis(restoreInTasks));
        g = probe.await("a checkpoint after the restore", Duration.ofSeconds(60), Duration.ofMillis(50),
                graph -> firstCheckpointAfter(graph, runningAgain) != null);
        CheckpointRecord firstAfter = firstCheckpointAfter(g, runningAgain);
        long firstCheckpointDone = firstAfter.triggerTimestamp() + firstAfter.endToEndMillis();
        say("first checkpoint after the restore (%d) completed %s after the kill", firstAfter.id(),
                Stats.millis(firstCheckpointDone - killTime));
        System.out.println();

        // ---- phase 2: run to the end of input
        nextProgress[0] = 0;
        probe.await("the end of the input", PHASE_TIMEOUT, PROGRESS_POLL, graph -> {
            if (graph.getState().isGloballyTerminalState()) {
                return true;
            }
            nextProgress[0] = progressIfDue(graph, ring, nextProgress[0]);
            return false;
        });
        JobResult result = cluster.awaitResult(jobId, Duration.ofSeconds(30));
        g = probe.graph();
        say("job %s (end of input)", g.getState());

        // ---- summary
        List<CheckpointRecord> checkpoints = JobProbe.completed(g);
        List<Long> durations = checkpoints.stream().map(CheckpointRecord::endToEndMillis).toList();
        CheckpointRecord last = checkpoints.isEmpty() ? null : checkpoints.get(checkpoints.size() - 1);
        TestingRing.MetricsSnapshot readBySurvivors = null;
        long replicaFallbacks = 0;
        for (int i = 0; i < ring.size(); i++) {
            if (i == victimNode) {
                continue;
            }
            TestingRing.MetricsSnapshot delta = TestingRing.metrics(ring.node(i)).minus(metricsAtKill.get(i));
            readBySurvivors = readBySurvivors == null ? delta : new TestingRing.MetricsSnapshot(
                    readBySurvivors.bytesWritten() + delta.bytesWritten(), readBySurvivors.bytesRead() + delta.bytesRead(),
                    readBySurvivors.bytesReadRemote() + delta.bytesReadRemote(),
                    readBySurvivors.replicaFallbacks() + delta.replicaFallbacks(),
                    readBySurvivors.underReplicatedWrites() + delta.underReplicatedWrites());
            replicaFallbacks += delta.replicaFallbacks();
        }
        TestJobs.Verdict verdict = TestJobs.verify(spec);
        boolean restoredFromCheckpoint = restored != null && verdict.restoredStarts() > 0;
        boolean ok = result.isSuccess() && verdict.exact() && restoredFromCheckpoint;

        System.out.println();
        System.out.println("Summary");
        System.out.printf("  state size        : %s in the last checkpoint before the failure (%s in the last one)%n",
                lastBefore == null ? "n/a" : Stats.bytes(lastBefore.stateSize()),
                last == null ? "n/a" : Stats.bytes(last.stateSize()));
        System.out.printf("  checkpoints       : %d completed (%d before the failure), %d failed; end-to-end median %s, max %s%n",
                JobProbe.completedCheckpoints(g), checkpointsBefore, JobProbe.failedCheckpoints(g),
                Stats.millis(Stats.of(durations).median()), Stats.millis(Stats.of(durations).max()));
        StringBuilder where = new StringBuilder();
        for (int i = 0; i < ring.size(); i++) {
            where.append(i == 0 ? "" : ", ").append(ring.shortName(i)).append(' ').append(Stats.bytes(bytesAtKill[i]))
                    .append(i == victimNode ? " (stopped)" : "");
        }
        System.out.printf("  replicas at kill  : %s; total %s on the ring for RF %d%n", where,
                Stats.bytes(sum(bytesAtKill)), REPLICATION_FACTOR);
        System.out.printf("  recovery          : kill -> all tasks running %s, -> first checkpoint after restore %s%n",
                Stats.millis(runningAgain - killTime), Stats.millis(firstCheckpointDone - killTime));
        System.out.printf("  read by survivors : %s after the kill (%s of it over the network from another node), "
                        + "%d reads fell back to a second replica%n",
                Stats.bytes(readBySurvivors.bytesRead()), Stats.bytes(readBySurvivors.bytesReadRemote()), replicaFallbacks);
        if (verdict.exact()) {
            System.out.printf("  result            : %,d of %,d keys exactly as expected, each emitted once -> OK%n",
                    verdict.matchingKeys(), verdict.expectedKeys());
        } else {
            System.out.printf("  result            : WRONG: %,d of %,d keys match, %d wrong, %d unexpected, %d duplicated; %s%n",
                    verdict.matchingKeys(), verdict.expectedKeys(), verdict.wrongKeys(), verdict.unexpectedKeys(),
                    verdict.duplicatedKeys(), verdict.firstProblem());
        }
        if (!restoredFromCheckpoint) {
            System.out.println("  NOTE: the job did not restore from a checkpoint; the demo did not show a recovery");
        }
        if (!result.isSuccess()) {
            System.out.println("  job failed: " + result.getSerializedThrowable().map(Throwable::toString).orElse("?"));
        }
        System.out.println(ok ? "DEMO OK" : "DEMO FAILED");
        return ok ? 0 : 1;
    }

    private static CheckpointRecord firstCheckpointAfter(AccessExecutionGraph g, long timestamp) {
        for (CheckpointRecord c : JobProbe.completed(g)) {
            if (c.triggerTimestamp() >= timestamp) {
                return c;
            }
        }
        return null;
    }

    /** Prints {@link #progress} if {@code dueAt} (epoch millis) has come; returns when it is due next. */
    private long progressIfDue(AccessExecutionGraph g, TestingRing ring, long dueAt) {
        if (System.currentTimeMillis() < dueAt) {
            return dueAt;
        }
        progress(g, ring);
        return System.currentTimeMillis() + PROGRESS_EVERY.toMillis();
    }

    private void progress(AccessExecutionGraph g, TestingRing ring) {
        CheckpointRecord last = JobProbe.latestCompleted(g);
        StringBuilder perNode = new StringBuilder();
        long[] bytes = ring.bytesStoredPerNode();
        for (int i = 0; i < ring.size(); i++) {
            RingNode node = ring.node(i);
            perNode.append(i == 0 ? "" : ", ").append(ring.shortName(i)).append(' ').append(Stats.bytes(bytes[i]))
                    .append(node.isRunning() ? "" : " (stopped)");
        }
        say("%-10s checkpoints %3d completed, last state %9s | ring %9s: %s",
                g.getState() == JobStatus.RUNNING && !JobProbe.allRunning(g) ? "RESTORING" : g.getState(),
                JobProbe.completedCheckpoints(g), last == null ? "-" : Stats.bytes(last.stateSize()),
                Stats.bytes(sum(bytes)), perNode);
    }

    private void say(String format, Object... args) {
        System.out.printf("[%5.1f s] %s%n", (System.currentTimeMillis() - start) / 1000.0, String.format(format, args));
    }

    private static int countSubtasks(AccessExecutionGraph g) {
        int n = 0;
        for (var ignored : g.getAllExecutionVertices()) {
            n++;
        }
        return n;
    }

    private static long sum(long[] values) {
        long s = 0;
        for (long v : values) {
            s += v;
        }
        return s;
    }
}
