package io.sr3.flink.cluster;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.cluster.FaultSchedule.Fault;
import io.sr3.flink.cluster.FaultSchedule.Kind;
import io.sr3.flink.cluster.FaultSchedule.Round;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.ring.Member;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.FileResultSink;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static io.sr3.flink.cluster.ProcessClusterTestSupport.JOB_TIMEOUT;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.assertExactResults;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.ringStats;

/**
 * Runs a {@link FaultSchedule} on a {@link ProcessCluster} of flink-sr3 TaskManagers, one round
 * after the other, and counts what happened for a {@link SoakReport}.
 *
 * <p>One round:
 * <ol>
 *   <li>submit the checkable job ({@link io.sr3.flink.testjob.StatefulTestJob}), rate-limited so
 *       that its input outlasts the faults, with checkpoints retained on cancellation; wait for two
 *       completed checkpoints;
 *   <li>inject the round's faults together, then heal them (restart, SIGCONT); a whole-cluster
 *       restart resubmits the job from its latest completed checkpoint, read over REST before
 *       the kill; a node with a full store ({@link FullStore}) comes back with its limit;
 *   <li>wait until every task runs and a checkpoint triggered after the faults completed (with a
 *       full store: two, triggered after it refused a block); cancel the job, which retains that
 *       checkpoint;
 *   <li>resume the job from the retained checkpoint without a rate limit and check that it
 *       delivers exactly the expected result for every key, each once; then restart every full
 *       store's node without its limit;
 *   <li>wait until every ring node reports the ring complete and nothing under-replicated, so
 *       that the next round's disk losses never overlap this round's.
 * </ol>
 * Every retained checkpoint stays on the ring (resumes do not claim it); {@link #audit} reads and
 * counts them all at the end, after all later rounds' faults.
 */
@NotThreadSafe
final class FaultSoak {

    static final int PARALLELISM = 3;
    static final Duration CHECKPOINT_INTERVAL = Duration.ofMillis(500);
    private static final Duration REPAIR_TIMEOUT = Duration.ofSeconds(120);
    /** {@code BlockStore}'s header of every block: magic, version, length and CRC32C. */
    private static final long BLOCK_HEADER_BYTES = 17;

    private final ProcessCluster cluster;
    private final ClusterSpec spec;
    private final Path workDir;
    private final RingStatsClient stats;
    private final TestJobSpec jobTemplate;
    private final SoakReport report;

    FaultSoak(ProcessCluster cluster, ClusterSpec spec, Path workDir, RingStatsClient stats, TestJobSpec jobTemplate,
            SoakReport report) {
        this.cluster = cluster;
        this.spec = spec;
        this.workDir = workDir;
        this.stats = stats;
        this.jobTemplate = jobTemplate;
        this.report = report;
    }

    /** Runs one round; throws, naming the round and its faults, if its result is not exact. */
    void run(Round round) throws Exception {
        long started = System.nanoTime();
        log("%s", round);
        TestJobSpec job = new TestJobSpec(jobTemplate.runId() + "-r" + round.index(), jobTemplate.records(),
                jobTemplate.recordsPerSecond(), jobTemplate.keys(), jobTemplate.payloadBytes(), jobTemplate.payloadSlots(),
                jobTemplate.windowMillis(), jobTemplate.failure(), jobTemplate.failAfterRecords());
        Path results = workDir.resolve("results-r" + round.index());
        JobID running = cluster.submit(ClusterJobs.statefulJob(job, PARALLELISM, results, CHECKPOINT_INTERVAL, true, null));
        cluster.awaitAllTasksRunning(running, JOB_TIMEOUT);
        awaitCheckpointAfter(running, 0, 2);

        List<FullStore> fullStores = new ArrayList<>();
        running = inject(round, running, job, results, fullStores);
        long healedAt = System.currentTimeMillis();
        cluster.awaitAllTasksRunning(running, JOB_TIMEOUT);
        if (fullStores.isEmpty()) {
            awaitCheckpointAfter(running, healedAt, 1);
        } else {
            awaitCheckpointAfter(running, awaitRefusals(fullStores, round), 2);
            log("%s: checkpoints up to %d completed while %s refused blocks", round,
                    cluster.checkpoints(running).path("latest").path("completed").path("id").asLong(), fullStores);
        }
        report.failovers += cluster.checkpoints(running).path("counts").path("restored").asLong(0);
        if (!FileResultSink.read(results).isEmpty()) {
            throw new IllegalStateException(round + ": the job reached the end of its input during the faults; "
                    + "lower its rate so that a cancellation can retain a checkpoint before any result is emitted");
        }
        cluster.cancel(running);
        cluster.awaitJobStatus(running, JOB_TIMEOUT, "CANCELED");
        String retained = cluster.checkpoints(running).path("latest").path("completed").path("external_path").asText();
        if (!retained.startsWith("sr3:")) {
            throw new IllegalStateException(round + ": no retained sr3 checkpoint after cancelling " + running + ": "
                    + cluster.checkpoints(running));
        }
        report.retainedCheckpoints.add(retained);

        JobID resumed = cluster.submit(ClusterJobs.statefulJob(job.withRecords(job.records(), 0), PARALLELISM, results,
                CHECKPOINT_INTERVAL, false, retained));
        report.resumes++;
        cluster.awaitJobStatus(resumed, JOB_TIMEOUT, "FINISHED");
        try {
            assertExactResults(results, job);
        } catch (AssertionError e) {
            throw new AssertionError(round + " (seed " + report.seed + "): wrong result after resuming from " + retained
                    + ": " + e.getMessage(), e);
        }
        report.roundsVerified++;
        liftLimits(fullStores, round);
        awaitRingRepaired(cluster.liveTaskManagers(), spec.taskManagers(), round.toString());
        long seconds = (System.nanoTime() - started) / 1_000_000_000L;
        report.roundSeconds.add(seconds);
        log("%s verified in %d s; retained %s", round, seconds, retained);
    }

    /**
     * Injects and heals the round's faults; returns the job that now runs (a new one after a
     * whole-cluster restart). Adds the nodes restarted with a full store to {@code fullStores}.
     */
    private JobID inject(Round round, JobID running, TestJobSpec job, Path results, List<FullStore> fullStores)
            throws Exception {
        for (Fault fault : round.faults()) {
            report.faults.merge(fault.kind(), 1, Integer::sum);
        }
        Fault first = round.faults().get(0);
        if (first.kind().wholeCluster()) {
            String latest = latestCompleted(running);
            log("restarting the whole cluster%s; the job resumes from %s",
                    first.kind() == Kind.RESTART_ALL_NEW_PORTS ? " on new ring ports" : "", latest);
            cluster.restartAll(first.kind() == Kind.RESTART_ALL_NEW_PORTS);
            JobID resumed = cluster.submit(ClusterJobs.statefulJob(job, PARALLELISM, results, CHECKPOINT_INTERVAL, true, latest));
            report.resumes++;
            return resumed;
        }
        List<FlinkProcess> killed = new ArrayList<>();
        List<FlinkProcess> paused = new ArrayList<>();
        for (Fault fault : round.faults()) {
            FlinkProcess target = cluster.liveTaskManager(name(fault));
            if (target == null) {
                throw new IllegalStateException(round + ": " + name(fault) + " is not running");
            }
            (fault.kind() == Kind.PAUSE ? paused : killed).add(target);
        }
        long injectedAt = System.nanoTime();
        cluster.kill(killed.toArray(new FlinkProcess[0]));
        for (FlinkProcess target : paused) {
            cluster.pause(target);
        }
        for (Fault fault : round.faults()) {
            if (fault.kind() == Kind.PAUSE) {
                long until = injectedAt + fault.pause().toNanos();
                Deadline.poll("the pause of " + name(fault) + " to last " + fault.pause().toMillis() + " ms",
                        fault.pause().plusSeconds(10), () -> System.nanoTime() - until >= 0);
                cluster.resume(paused.stream().filter(p -> p.name().equals(name(fault))).findFirst().orElseThrow());
            }
        }
        for (Fault fault : round.faults()) {
            switch (fault.kind()) {
                case KILL -> cluster.restartTaskManager(name(fault), false);
                case KILL_LOSE_DISK -> cluster.restartTaskManager(name(fault), true);
                case DISK_REPLACED -> {
                    List<FlinkProcess> survivors = cluster.liveTaskManagers();
                    awaitRingRepaired(survivors, survivors.size(), "the ring without " + name(fault));
                    cluster.restartTaskManager(name(fault), true);
                }
                case FULL_STORE -> {
                    FullStore full = FullStore.of(cluster, name(fault), blockBytes() + BLOCK_HEADER_BYTES);
                    cluster.restartTaskManager(name(fault), false, full.config());
                    fullStores.add(full);
                    log("restarted %s", full);
                }
                case PAUSE -> { }
                default -> throw new IllegalStateException("Unexpected " + fault + " in " + round);
            }
        }
        cluster.awaitRegisteredTaskManagers(spec.taskManagers());
        return running;
    }

    /**
     * Waits until every full store logged a refused block; returns when the last one did, so that
     * checkpoints triggered later complete while the stores are full.
     */
    private long awaitRefusals(List<FullStore> fullStores, Round round) {
        for (FullStore full : fullStores) {
            Deadline.poll(round + ": the store of " + full + " to refuse a block (a line with '"
                    + full.storeDirectory() + " is full' in " + full.log() + ")", JOB_TIMEOUT, () -> !full.refusals().isEmpty());
            log("%s refused: %s", full, full.refusals().get(0));
        }
        return System.currentTimeMillis();
    }

    /** Restarts every node of a full store (SIGKILL, then a start with its store directory) without its limit. */
    private void liftLimits(List<FullStore> fullStores, Round round) throws Exception {
        for (FullStore full : fullStores) {
            FlinkProcess tm = cluster.liveTaskManager(full.taskManager());
            if (tm == null) {
                throw new IllegalStateException(round + ": " + full.taskManager() + " with a full store is not running");
            }
            Long stored = ringStats(stats, List.of(tm)).getOrDefault(tm.name(), Map.of()).get("bytesStored");
            int refusals = full.refusals().size();
            report.fullStoreRefusals += refusals;
            log("%s logged %d refusals and stores %s bytes; restarting it without the limit", full, refusals, stored);
            cluster.kill(tm);
            cluster.restartTaskManager(full.taskManager(), false);
        }
        if (!fullStores.isEmpty()) {
            cluster.awaitRegisteredTaskManagers(spec.taskManagers());
        }
    }

    /** {@code sr3.block.size} of the cluster, in bytes. */
    private long blockBytes() {
        String configured = spec.extraConfig().get(Sr3Options.BLOCK_SIZE.key());
        return configured == null ? Sr3Options.BLOCK_SIZE.defaultValue().getBytes() : MemorySize.parse(configured).getBytes();
    }

    private static String name(Fault fault) {
        return "tm" + (fault.target() + 1);
    }

    /** The latest completed checkpoint of a running job; num-retained keeps it while newer ones complete. */
    private String latestCompleted(JobID job) {
        String[] path = new String[1];
        Deadline.poll("a completed checkpoint of " + job, JOB_TIMEOUT, () -> {
            path[0] = cluster.checkpoints(job).path("latest").path("completed").path("external_path").asText();
            return path[0].startsWith("sr3:");
        });
        return path[0];
    }

    /** Waits until {@code count} checkpoints triggered at or after {@code sinceMillis} completed. */
    private void awaitCheckpointAfter(JobID job, long sinceMillis, int count) {
        long[] baseline = {-1};
        Deadline.poll(count + " checkpoint(s) of " + job + " triggered after " + sinceMillis, JOB_TIMEOUT, () -> {
            JsonNode checkpoints = cluster.checkpoints(job);
            JsonNode latest = checkpoints.path("latest").path("completed");
            if (latest.isMissingNode() || latest.isNull() || latest.path("trigger_timestamp").asLong() < sinceMillis) {
                return false;
            }
            long completed = checkpoints.path("counts").path("completed").asLong();
            if (baseline[0] < 0) {
                baseline[0] = completed - 1;
            }
            return completed - baseline[0] >= count;
        }, () -> cluster.checkpoints(job).path("counts") + ", exceptions " + cluster.exceptions(job));
    }

    /**
     * Waits until every given ring node answers, sees {@code ringSize} storage members and reports
     * no repair pending and no under-replicated block: the ring's own word that it healed.
     */
    void awaitRingRepaired(List<FlinkProcess> nodes, int ringSize, String after) {
        Deadline.poll("the ring to repair after " + after, REPAIR_TIMEOUT, () -> {
            Map<String, Map<String, Long>> all = ringStats(stats, nodes);
            return all.size() == nodes.size() && all.values().stream().allMatch(s -> s.getOrDefault("ringSize", 0L) == ringSize
                    && s.getOrDefault("repairPending", 0L) == 0 && s.getOrDefault("underReplicatedBlocks", 0L) == 0
                    && s.getOrDefault("auditUnderReplicatedBlocks", 0L) == 0);
        }, () -> describeRepair(nodes));
    }

    /** Every node's ring stats, then the repair log of each node that has not healed (or does not answer). */
    private String describeRepair(List<FlinkProcess> nodes) {
        Map<String, Map<String, Long>> all = ringStats(stats, nodes);
        StringBuilder description = new StringBuilder(all.toString());
        for (FlinkProcess node : nodes) {
            Map<String, Long> s = all.get(node.name());
            if (s == null || s.getOrDefault("repairPending", 0L) != 0 || s.getOrDefault("underReplicatedBlocks", 0L) != 0
                    || s.getOrDefault("auditUnderReplicatedBlocks", 0L) != 0) {
                description.append("\n").append(node.name()).append("'s last repair lines:\n")
                        .append(ProcessClusterTestSupport.repairLog(node));
            }
        }
        return description.toString();
    }

    /** Reads and counts every retained checkpoint through a fresh client node of the ring in this JVM. */
    CheckpointAudit.Result audit() throws IOException {
        Configuration config = new Configuration();
        config.setString("sr3.ring.role", "client");
        config.setString("sr3.ring.host", "127.0.0.1");
        config.setString("sr3.ring.seeds", String.join(";", cluster.ringSeeds()));
        config.setString("sr3.ring.replication-factor", String.valueOf(spec.replicationFactor()));
        spec.extraConfig().forEach((key, value) -> {
            if (key.startsWith("sr3.transport.") || key.startsWith("sr3.block.")) {
                config.setString(key, value);
            }
        });
        // A ring node of this JVM (one an earlier test's late call started) would join the audit's ring.
        for (RingNode stray : LocalRing.nodes()) {
            log("closing ring node %s of this JVM, left over by an earlier test", stray);
            stray.close();
        }
        Set<String> taskManagers = new HashSet<>(cluster.ringSeeds());
        try (RingNode client = RingNode.start(Sr3Options.nodeConfig(config))) {
            Deadline.poll("the audit's ring client to see the " + spec.taskManagers() + " TaskManagers, and only them",
                    Duration.ofSeconds(30), () -> client.membership().members().stream().map(Member::id)
                            .collect(Collectors.toSet()).equals(taskManagers),
                    () -> client.membership().members() + " against " + taskManagers);
            CheckpointAudit.Result result = CheckpointAudit.audit(client, report.retainedCheckpoints, spec.replicationFactor());
            report.audit = result;
            return result;
        }
    }

    static void log(String format, Object... args) {
        System.out.printf("[soak] " + format + "%n", args);
    }

    /** Counts by kind, in the enum's order. */
    static Map<Kind, Integer> emptyCounts() {
        return new EnumMap<>(Kind.class);
    }
}
