package io.sr3.flink.benchmark;

import io.sr3.flink.benchmark.BackendComparisonBenchmark.ThroughputPhase;
import io.sr3.flink.benchmark.RunResult.CpuUse;
import io.sr3.flink.benchmark.RunResult.Recovery;
import io.sr3.flink.harness.JobProbe;
import io.sr3.flink.harness.JobProbe.CheckpointRecord;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.harness.TestJobs;
import io.sr3.flink.harness.ThreadCpu;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.EmbeddedCluster;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobmaster.JobResult;

import javax.annotation.Nullable;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.sr3.flink.benchmark.BackendComparisonBenchmark.CHECKPOINTS_BEFORE_TASK_MANAGER_LOSS;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.FAIL_AFTER;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.FILL_RECORDS;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.KEYS;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.MIN_CHECKPOINTS_BEFORE_FAILURE;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.PARALLELISM;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.PAYLOAD_BYTES;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.PAYLOAD_SLOTS;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.PHASE_TIMEOUT;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.RATE;
import static io.sr3.flink.benchmark.BackendComparisonBenchmark.RECORDS;

/**
 * The second phase of a {@link BackendComparisonBenchmark} run: the job at a fixed rate until its
 * keyed state is full and a few checkpoints completed (checkpoint durations, and the CPU per thread
 * group and GC time of that window), then one injected task failure and, after the restore and
 * more checkpoints, the loss of the TaskManager with the most RocksDB instances, replaced at once;
 * each restore is timed from the failure to all tasks running and to the first checkpoint after.
 */
final class RestorePhase {

    /** Prints one progress line, as the benchmark does. */
    interface Progress {
        void say(String format, Object... args);
    }

    private final Progress progress;

    RestorePhase(Progress progress) {
        this.progress = progress;
    }

    /**
     * Runs the job at {@link BackendComparisonBenchmark#RATE} on {@code cluster} through a task
     * failure and a TaskManager loss, and returns the run's result with {@code throughput}, the
     * first phase's.
     *
     * @param ring the flink-sr3 ring the cluster checkpoints to, or null for the other backends
     */
    RunResult run(EmbeddedCluster cluster, @Nullable TestingRing ring, Configuration config, String runId,
            String backend, int round, ThroughputPhase throughput) throws Exception {
        TestJobSpec spec = TestJobSpec.of(runId).withRecords(RECORDS, RATE).withKeys(KEYS)
                .withPayload(PAYLOAD_BYTES, PAYLOAD_SLOTS).withFailure(TestJobSpec.FailureMode.WHEN_ARMED, 0);
        long fillMillis = (long) (1000.0 * FILL_RECORDS / RATE);
        try {
            JobProbe probe = JobProbe.submitAndAwaitRunning(cluster, TestJobs.jobGraph(config, spec, PARALLELISM));
            JobID jobId = probe.jobId();
            AccessExecutionGraph g = probe.graph();
            long running = JobProbe.lastSwitchToRunning(g);
            ThreadCpu.Snapshot cpuAtRunning = ThreadCpu.snapshot();
            long gcAtRunning = gcMillis();
            g = probe.await("state full and " + MIN_CHECKPOINTS_BEFORE_FAILURE + " checkpoints", PHASE_TIMEOUT,
                    Duration.ofMillis(100),
                    graph -> System.currentTimeMillis() - running >= FAIL_AFTER.toMillis()
                            && JobProbe.completedCheckpoints(graph) >= MIN_CHECKPOINTS_BEFORE_FAILURE);
            ThreadCpu.Snapshot cpuAtFailure = ThreadCpu.snapshot();
            long gcUntilFailure = gcMillis() - gcAtRunning;
            long[] ringBytes = ring == null ? new long[0] : ring.bytesStoredPerNode();
            long checkpointedBeforeFailure = 0;
            for (CheckpointRecord c : JobProbe.completed(g)) {
                if (c.triggerTimestamp() >= running) {
                    checkpointedBeforeFailure += c.checkpointedSize();
                }
            }
            CpuUse cpu = new CpuUse(cpuAtFailure.processCpuNanos() - cpuAtRunning.processCpuNanos(),
                    checkpointedBeforeFailure, ThreadCpu.secondsByGroup(cpuAtRunning, cpuAtFailure),
                    top(ThreadCpu.secondsByName(cpuAtRunning, cpuAtFailure), 15), gcUntilFailure);

            int attemptBefore = JobProbe.attempt(g);
            long armed = System.currentTimeMillis();
            RunRegistry.run(runId).armFailure();
            long failure = armed;
            g = probe.await("the restart after the injected failure", Duration.ofSeconds(120), Duration.ofMillis(20),
                    graph -> JobProbe.attempt(graph) > attemptBefore && JobProbe.allRunning(graph));
            long thrown = JobProbe.earliestFailure(g, armed - 1);
            if (thrown != 0) {
                failure = thrown;
            }
            RestoredCheckpointStats restored = JobProbe.restored(g);
            Recovery taskFailure = recovery(probe, g, failure);
            progress.say("task failure: checkpoint %s (%s) restored; -> all running %s (longest task restore %s), -> first "
                            + "checkpoint %s", restored == null ? "NONE" : restored.getCheckpointId(),
                    restored == null ? "-" : Stats.bytes(restored.getStateSize()),
                    Stats.millis(taskFailure.toRunningMillis()), Stats.millis(taskFailure.longestTaskRestoreMillis()),
                    Stats.millis(taskFailure.toFirstCheckpointMillis()));

            long afterFirst = JobProbe.completedCheckpoints(probe.graph());
            g = probe.await(CHECKPOINTS_BEFORE_TASK_MANAGER_LOSS + " checkpoints before the TaskManager loss",
                    Duration.ofSeconds(60), Duration.ofMillis(20),
                    graph -> JobProbe.completedCheckpoints(graph) >= afterFirst + CHECKPOINTS_BEFORE_TASK_MANAGER_LOSS);
            Recovery taskManagerLoss = loseTaskManager(cluster, probe, jobId, g);

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
            progress.say("restore phase results %s", verdict.exact() ? "exact" : "WRONG: " + verdict.firstProblem());
            return new RunResult(backend, round, throughput.throughput(), fullState,
                    restored == null ? -1 : restored.getCheckpointId(), restored == null ? 0 : restored.getStateSize(),
                    taskFailure, taskManagerLoss, exact, ringBytes, ringWritten, cpu);
        } finally {
            RunRegistry.remove(runId);
        }
    }

    /**
     * Closes the TaskManager that holds the most RocksDB instances of the job and starts a fresh
     * one at once, as Kubernetes replaces a lost pod; measures from the close.
     */
    private Recovery loseTaskManager(EmbeddedCluster cluster, JobProbe probe, JobID jobId, AccessExecutionGraph g)
            throws Exception {
        int attemptBefore = JobProbe.attempt(g);
        int victim = cluster.taskManagerWithMostStateInstances(jobId);
        long lost = System.currentTimeMillis();
        cluster.terminateTaskManager(victim);
        cluster.startTaskManager();
        g = probe.await("the restart after the TaskManager loss", Duration.ofSeconds(120), Duration.ofMillis(20),
                graph -> JobProbe.attempt(graph) > attemptBefore && JobProbe.allRunning(graph));
        Recovery r = recovery(probe, g, lost);
        progress.say("TaskManager %d lost (a fresh one started): -> all running %s (longest task restore %s), -> first "
                        + "checkpoint %s", victim, Stats.millis(r.toRunningMillis()),
                Stats.millis(r.longestTaskRestoreMillis()), Stats.millis(r.toFirstCheckpointMillis()));
        return r;
    }

    /** The restore that followed a failure at {@code failure}, once all tasks run again in {@code g}. */
    private static Recovery recovery(JobProbe probe, AccessExecutionGraph g, long failure) throws Exception {
        long runningAgain = JobProbe.lastSwitchToRunning(g);
        long taskRestore = JobProbe.longestInitializationMillis(g);
        g = probe.await("a checkpoint after the restore", Duration.ofSeconds(60), Duration.ofMillis(20),
                graph -> firstCheckpointAfter(graph, runningAgain) != null);
        CheckpointRecord firstAfter = firstCheckpointAfter(g, runningAgain);
        long firstCheckpointDone = firstAfter.triggerTimestamp() + firstAfter.endToEndMillis();
        return new Recovery(runningAgain - failure, taskRestore, firstCheckpointDone - failure);
    }

    private static Map<String, Double> top(Map<String, Double> largestFirst, int n) {
        Map<String, Double> top = new LinkedHashMap<>();
        largestFirst.entrySet().stream().limit(n).forEach(e -> top.put(e.getKey(), e.getValue()));
        return top;
    }

    /** Time the garbage collectors report collecting so far (pauses, and concurrent cycles where reported). */
    private static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
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
}
