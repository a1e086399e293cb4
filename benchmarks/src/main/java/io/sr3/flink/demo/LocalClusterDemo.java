package io.sr3.flink.demo;

import io.sr3.flink.cluster.ClusterJobs;
import io.sr3.flink.cluster.ClusterSpec;
import io.sr3.flink.cluster.ProcessCluster;
import io.sr3.flink.cluster.FlinkProcess;
import io.sr3.flink.cluster.RecoveryProbe;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.FileResultSink;
import io.sr3.flink.testjob.KeyResult;
import io.sr3.flink.testjob.StatefulTestJob;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.api.common.JobID;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Starts a real local Flink cluster with flink-sr3 (a JobManager and three TaskManagers as
 * separate JVMs on 127.0.0.1, each TaskManager a ring node, the JobManager a ring client),
 * submits the checkable test job, SIGKILLs a TaskManager that runs tasks, starts a replacement,
 * and shows the recovery, the ring's counters while it heals, and the job's exact result. Every
 * process it started is killed at the end, also on failure.
 *
 * <pre>
 * mvn -B -q install -DskipTests &amp;&amp; mvn -B -q -pl benchmarks exec:exec@local-cluster
 * </pre>
 *
 * The processes' directories (config.yaml, logs) are under {@code benchmarks/target/local-cluster}.
 */
public final class LocalClusterDemo {

    private LocalClusterDemo() {}

    public static void main(String[] args) throws Exception {
        java.nio.file.Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        Path dir = Path.of(args.length > 0 ? args[0] : "target/local-cluster").toAbsolutePath()
                .resolve("run-" + System.currentTimeMillis());
        TestJobSpec spec = TestJobSpec.of("local-cluster").withRecords(30_000, 1_000).withKeys(64).withPayload(2048, 4);
        Path results = dir.resolve("results");
        say("Starting a JobManager and 3 TaskManagers (replication factor 2) in " + dir);
        try (ProcessCluster cluster = ProcessCluster.start(ClusterSpec.sr3(3, 2), dir);
                RingStatsClient stats = new RingStatsClient(TransportSecurity.none(), Duration.ofSeconds(2))) {
            for (FlinkProcess tm : cluster.liveTaskManagers()) {
                say("  " + tm + ": ring node " + tm.ringAddress() + ", config " + tm.directory().resolve("config.yaml"));
            }
            say("JobManager " + cluster.jobManager() + ": config " + cluster.jobManager().directory().resolve("config.yaml"));
            printRing(stats, cluster);

            JobID job = cluster.submit(ClusterJobs.statefulJob(spec, 3, results, Duration.ofMillis(500), false, null));
            say("Submitted job " + job + " over REST: " + spec.records() + " records at " + (long) spec.recordsPerSecond()
                    + "/s, " + spec.keys() + " keys, parallelism 3");
            cluster.awaitAllTasksRunning(job, Duration.ofSeconds(120));
            Deadline.poll("three completed checkpoints", Duration.ofSeconds(120),
                    () -> cluster.completedCheckpoints(job) >= 3);
            say("Checkpoints completed: " + cluster.completedCheckpoints(job) + ", latest "
                    + cluster.checkpoints(job).path("latest").path("completed").path("external_path").asText());
            printRing(stats, cluster);

            FlinkProcess victim = cluster.liveTaskManager(cluster.taskManagersRunning(job).get(0));
            say("SIGKILL " + victim + " and start a replacement TaskManager");
            RecoveryProbe.Recovery recovery = RecoveryProbe.killAndMeasure(cluster, job, victim, "", Duration.ofSeconds(120));
            say(String.format("Recovered: kill -> all tasks RUNNING %d ms, kill -> first checkpoint after restore %d ms; "
                    + "restored from %s", recovery.killToRunningMillis(), recovery.killToCheckpointMillis(),
                    recovery.restoredFrom()));
            Deadline.poll("the ring to re-replicate", Duration.ofSeconds(60), () -> {
                Map<String, Map<String, Long>> all = stats(stats, cluster);
                return all.size() == cluster.liveTaskManagers().size() && all.values().stream()
                        .allMatch(s -> s.get("repairPending") == 0 && s.get("underReplicatedBlocks") == 0);
            });
            say("Ring after the repair:");
            printRing(stats, cluster);

            cluster.awaitJobStatus(job, Duration.ofSeconds(180), "FINISHED");
            Map<Integer, List<KeyResult>> delivered = FileResultSink.read(results);
            Map<Integer, KeyResult> got = new TreeMap<>();
            boolean once = true;
            for (Map.Entry<Integer, List<KeyResult>> e : delivered.entrySet()) {
                got.put(e.getKey(), e.getValue().get(0));
                once &= e.getValue().size() == 1;
            }
            boolean exact = once && got.equals(StatefulTestJob.expectedResults(spec));
            say("Job FINISHED; results " + (exact ? "EXACTLY as expected (one per key, " + got.size() + " keys)"
                    : "WRONG: " + delivered));
            say("Stopping every process of the cluster");
            if (!exact) {
                System.exit(1);
            }
        }
    }

    private static Map<String, Map<String, Long>> stats(RingStatsClient stats, ProcessCluster cluster) {
        Map<String, Map<String, Long>> all = new TreeMap<>();
        for (FlinkProcess tm : cluster.liveTaskManagers()) {
            try {
                all.put(tm.name(), stats.stats(tm.ringAddress()));
            } catch (IOException e) {
                // starting or gone
            }
        }
        return all;
    }

    private static void printRing(RingStatsClient stats, ProcessCluster cluster) {
        stats(stats, cluster).forEach((name, s) -> say(String.format(
                "  ring %-4s ringSize=%d bytesStored=%d underReplicatedBlocks=%d blocksReReplicated=%d bytesReReplicated=%d",
                name, s.get("ringSize"), s.get("bytesStored"), s.get("underReplicatedBlocks"), s.get("blocksReReplicated"),
                s.get("bytesReReplicated"))));
    }

    private static void say(String line) {
        System.out.println("[local-cluster] " + line);
        System.out.flush();
    }
}
