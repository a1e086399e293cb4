package io.sr3.flink.cluster;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.cluster.CheckpointPlacement.FileCopies;
import io.sr3.flink.cluster.CheckpointPlacement.Victims;
import io.sr3.flink.cluster.ClusterJobs.Pipeline;
import io.sr3.flink.fs.RingCensus;
import io.sr3.flink.fs.Sr3FileSystem;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.ring.Member;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.TestJobSpec;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import javax.annotation.Nullable;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

import static io.sr3.flink.cluster.ProcessClusterTestSupport.JOB_TIMEOUT;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.assertExactResults;
import static io.sr3.flink.cluster.ProcessClusterTestSupport.awaitRingSize;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sr3.replication.mode: cost-aware} in a real cluster (JobManager and four TaskManagers as
 * separate JVMs, replication factor 2, write quorum 2): a job of two pipelines with the same rate
 * and topology, one whose keyed state is tiny (its loss costs as much as the other's, for a
 * fraction of the bytes: a few KiB per subtask, mostly Flink's per-file overhead) and one whose
 * state is some 40 times larger. The costly state's
 * files get 3 copies and the cheap state's 2, per manifest and per block holder it records. Then two
 * TaskManagers that hold copies of a costly block are SIGKILLed at once, a pair chosen so that no
 * other file of the checkpoint (cheap or source state, {@code _metadata}, or any of their
 * manifests) has all its copies on those two: under uniform replication factor 2 a pair like that
 * can hold every copy of a costly file, here the third copy restores it, and both pipelines'
 * results are exactly right.
 *
 * <p>The budget is 2.3 copies per checkpoint byte, not the 2.0 of uniform factor 2 the issue names:
 * the budget is a bytes-weighted mean, and at a minimum of 2 copies per file, a mean of 2.0 leaves
 * no copy to give, so every file keeps 2. At 2.3 the large cheap state stays at 2, and the third
 * copies of the costly and source state bring the mean to about 2.03.
 */
class Sr3ProcessClusterCostAwareReplicationITCase extends ProcessClusterTestBase {

    private static final double BUDGET = 2.3;
    private static final Duration CHECKPOINT_INTERVAL = Duration.ofSeconds(1);
    /**
     * After each checkpoint, 2 s without a pending one: the census of the checkpoint (under a
     * second) and the kill fall in it, so the checkpoint censused is the one the job restores, not
     * a later one whose acknowledgements were in before the kill.
     */
    private static final Duration MIN_PAUSE = Duration.ofSeconds(2);
    /** From the job running to a checkpoint with the planned copies and a pair to kill: plan, 5 s plan refresh, a few checkpoints. */
    private static final Duration PLACEMENT_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Two slots per TaskManager, subtasks spread evenly: every TaskManager runs a subtask of every
     * vertex, so the kill fails the job, and the two survivors have the four slots the restore needs.
     */
    private static final int PARALLELISM = 4;
    /** 500 records/s per pipeline for 40 s: the input outlasts the wait for a placement and the kill. */
    private static final long RECORDS = 20_000;
    private static final double RATE = 500;
    private static final String COSTLY = "keyed-state-costly";
    private static final String CHEAP = "keyed-state-cheap";

    @Test
    void twoTaskManagersHoldingTheCostlyStateDieAtOnceAndItsThirdCopyRestoresIt() throws Exception {
        killTwoHoldersOfTheCostlyState(BUDGET, 3);
    }

    /**
     * @param budget {@code sr3.replication.budget}
     * @param costlyCopies the copies the costly state's files must have before the kill
     */
    private void killTwoHoldersOfTheCostlyState(double budget, int costlyCopies) throws Exception {
        cluster = ProcessCluster.start(ClusterSpec.sr3(4, 2).withSlotsPerTaskManager(2).withWorkingState("heap")
                        .withCheckpointInterval(CHECKPOINT_INTERVAL).withExtraConfig(Map.of(
                                "taskmanager.load-balance.mode", "SLOTS",
                                "execution.checkpointing.min-pause", MIN_PAUSE.toMillis() + " ms",
                                "sr3.ring.min-replicas", "2",
                                "sr3.replication.mode", "cost-aware",
                                "sr3.replication.budget", String.valueOf(budget),
                                "sr3.replication.interval", "1 s",
                                CheckpointingOptions.FS_SMALL_FILE_THRESHOLD.key(), "0 b")),
                ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        stats = new RingStatsClient(TransportSecurity.none(), Duration.ofSeconds(2));
        awaitRingSize(stats, cluster.liveTaskManagers(), 4);

        // Same rate, same topology, so the same failure cost; 4 x 8 payload bytes of keyed state against 2,000 x 512.
        TestJobSpec costly = TestJobSpec.of("cost-aware-costly").withRecords(RECORDS, RATE).withKeys(4).withPayload(8, 1);
        TestJobSpec cheap = TestJobSpec.of("cost-aware-cheap").withRecords(RECORDS, RATE).withKeys(2_000)
                .withPayload(512, 1);
        Path costlyResults = tempDir.resolve("results-costly");
        Path cheapResults = tempDir.resolve("results-cheap");
        JobGraph graph = ClusterJobs.twoPipelineJob(new Pipeline(costly, "-costly", costlyResults),
                new Pipeline(cheap, "-cheap", cheapResults), PARALLELISM, CHECKPOINT_INTERVAL);
        JobID job = cluster.submit(graph);
        cluster.awaitAllTasksRunning(job, JOB_TIMEOUT);
        assertThat(cluster.taskManagersRunning(job)).as("TaskManagers running tasks of the job: any two killed fail it")
                .hasSize(4);

        Kill kill;
        ExecutorService readers = Executors.newFixedThreadPool(8);
        try (RingNode client = ringClient()) {
            Sr3FileSystem fs = (Sr3FileSystem) Sr3FileSystem.unwrap(FileSystem.get(URI.create("sr3:///")));
            kill = new Kill(client, fs, job, vertexNames(graph), costlyCopies, readers);
            Deadline.poll("a checkpoint whose costly state has " + costlyCopies + " copies and its cheap state 2, "
                    + "with two holders of a costly block that hold all copies of nothing else; then their SIGKILL",
                    PLACEMENT_TIMEOUT, kill::killIfFound, kill::lastSeen);
        } finally {
            readers.shutdownNow();
        }
        Victims chosen = kill.chosen;
        System.out.printf("[cost-aware] killed %s holding %s of %s; restoring from checkpoint %d%n", kill.victims,
                chosen.block(), chosen.file().path(), chosen.checkpoint().id());
        assertThat(chosen.checkpoint().of(COSTLY)).as("costly state files of %s", chosen.checkpoint())
                .isNotEmpty().allMatch(f -> f.hasCopies(costlyCopies));
        assertThat(chosen.checkpoint().of(CHEAP)).as("cheap state files of %s", chosen.checkpoint())
                .isNotEmpty().allMatch(f -> f.hasCopies(2));
        cluster.awaitJobStatus(job, JOB_TIMEOUT, "FINISHED");
        JsonNode checkpoints = cluster.checkpoints(job);
        assertThat(checkpoints.path("latest").path("restored").path("id").asLong(-1))
                .as("the job restored from the checkpoint whose placement was checked, not a later one, and not "
                        + "after the end of input: %s", checkpoints)
                .isEqualTo(chosen.checkpoint().id());
        assertExactResults(costlyResults, costly);
        assertExactResults(cheapResults, cheap);
        assertThat(Files.readString(cluster.jobManager().directory().resolve("jobmanager.log")))
                .as("the planner's log line for the costly state").containsPattern("\\[replication " + job
                        + "\\] Replication of operator '" + COSTLY + "[^']*' .*, " + costlyCopies + " copies in ");
        String exceptions = cluster.exceptions(job);
        assertThat(exceptions).as("exception history of %s", job).doesNotContain("Lost sr3://")
                .doesNotContain("BlockUnavailableException");
        for (FlinkProcess tm : cluster.liveTaskManagers()) {
            assertThat(Files.readString(tm.directory().resolve(tm.name() + ".log")))
                    .as("log of %s", tm).doesNotContain("Lost sr3://");
        }
    }

    /**
     * Censuses each new completed checkpoint and SIGKILLs the chosen pair as soon as one qualifies;
     * state for {@link Deadline#poll}.
     */
    private final class Kill {
        private final RingNode client;
        private final Sr3FileSystem fs;
        private final JobID job;
        private final Map<String, String> vertexOfOperator;
        private final int costlyCopies;
        private final ExecutorService readers;
        private long censused = -1;
        private String seen = "no completed checkpoint yet";
        @Nullable Victims chosen;
        List<FlinkProcess> victims = List.of();

        Kill(RingNode client, Sr3FileSystem fs, JobID job, Map<String, String> vertexOfOperator, int costlyCopies,
                ExecutorService readers) {
            this.client = client;
            this.fs = fs;
            this.job = job;
            this.vertexOfOperator = vertexOfOperator;
            this.costlyCopies = costlyCopies;
            this.readers = readers;
        }

        boolean killIfFound() {
            JsonNode latest = cluster.checkpoints(job).path("latest").path("completed");
            long id = latest.path("id").asLong(-1);
            if (id <= censused) {
                return false;
            }
            censused = id;
            CheckpointPlacement checkpoint;
            long started = System.nanoTime();
            try {
                checkpoint = census(id, latest.path("external_path").asText());
            } catch (IOException | UncheckedIOException e) {
                seen = "checkpoint " + id + " unreadable (subsumed while read?): " + e;
                System.out.printf("[cost-aware] %s%n", seen);
                return false;
            }
            seen = checkpoint.toString();
            System.out.printf("[cost-aware] %s: census in %d ms: %s%n", java.time.LocalTime.now(),
                    (System.nanoTime() - started) / 1_000_000, seen);
            if (!checkpoint.of(COSTLY).stream().allMatch(f -> f.hasCopies(costlyCopies))
                    || !checkpoint.of(CHEAP).stream().allMatch(f -> f.hasCopies(2))) {
                return false;
            }
            Victims placement = checkpoint.pairHoldingOnly(COSTLY);
            if (placement == null) {
                seen += "; no pair of a costly block's holders that holds no other file entirely";
                return false;
            }
            List<FlinkProcess> pair = new ArrayList<>();
            for (FlinkProcess tm : cluster.liveTaskManagers()) {
                if (placement.members().contains(tm.ringAddress())) {
                    pair.add(tm);
                }
            }
            assertThat(pair).as("live TaskManagers at %s", placement.members()).hasSize(2);
            try {
                // Last, right before the kill: a checkpoint pending at the kill could still complete and be restored.
                if (laterCheckpointTriggered(checkpoint)) {
                    seen += "; the next checkpoint was triggered meanwhile";
                    return false;
                }
                System.out.printf("[cost-aware] %s: no checkpoint after %d triggered; SIGKILL %s%n",
                        java.time.LocalTime.now(), id, pair);
                cluster.kill(pair.toArray(new FlinkProcess[0]));
                victims = pair;
            } catch (IOException e) {
                seen += "; cannot list later checkpoints: " + e;
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted before the kill", e);
            }
            chosen = placement;
            return true;
        }

        String lastSeen() {
            return seen;
        }

        /** Reads the checkpoint's {@code _metadata}, then every file's manifest, in parallel: the census must beat the next checkpoint. */
        private CheckpointPlacement census(long id, String checkpointPath) throws IOException {
            String metadataPath = checkpointPath.replaceAll("/+$", "") + "/_metadata";
            CheckpointMetadata metadata;
            try (FSDataInputStream in = fs.open(new org.apache.flink.core.fs.Path(metadataPath))) {
                metadata = Checkpoints.loadCheckpointMetadata(new DataInputStream(in), getClass().getClassLoader(),
                        checkpointPath);
            }
            Map<String, String> vertexOfPath = new LinkedHashMap<>();
            vertexOfPath.put(metadataPath, "_metadata");
            for (OperatorState operator : metadata.getOperatorStates()) {
                String vertex = vertexOfOperator.getOrDefault(operator.getOperatorID().toHexString(), "?");
                String kind = vertex.contains(COSTLY) ? COSTLY : vertex.contains(CHEAP) ? CHEAP : vertex;
                Map<String, Long> paths = new LinkedHashMap<>();
                List<String> problems = new ArrayList<>();
                for (OperatorSubtaskState subtask : operator.getStates()) {
                    CheckpointAudit.collect(subtask, paths, problems);
                }
                assertThat(problems).as("state handles of %s in %s", vertex, checkpointPath).isEmpty();
                paths.keySet().forEach(path -> vertexOfPath.put(path, kind));
            }
            List<CompletableFuture<FileCopies>> reads = new ArrayList<>();
            vertexOfPath.forEach((path, vertex) -> reads.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return FileCopies.of(vertex, RingCensus.placement(client, path));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, readers)));
            List<FileCopies> files = new ArrayList<>();
            try {
                for (CompletableFuture<FileCopies> read : reads) {
                    files.add(read.join());
                }
            } catch (CompletionException e) {
                throw e.getCause() instanceof UncheckedIOException io ? io.getCause() : new IOException(e.getCause());
            }
            return new CheckpointPlacement(id, checkpointPath, files);
        }

        /**
         * Whether a checkpoint after {@code checkpoint} has its directory: the JobManager creates it
         * when it triggers the checkpoint, so without one no checkpoint is pending.
         */
        private boolean laterCheckpointTriggered(CheckpointPlacement checkpoint) throws IOException {
            org.apache.flink.core.fs.Path jobDir = new org.apache.flink.core.fs.Path(checkpoint.path()).getParent();
            for (FileStatus child : fs.listStatus(jobDir)) {
                String name = child.getPath().getName();
                if (name.matches("chk-\\d+") && Long.parseLong(name.substring(4)) > checkpoint.id()) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Operator id (hex) to the name of its job vertex. */
    private static Map<String, String> vertexNames(JobGraph graph) {
        Map<String, String> names = new HashMap<>();
        for (JobVertex vertex : graph.getVertices()) {
            for (OperatorIDPair ids : vertex.getOperatorIDs()) {
                names.put(ids.getGeneratedOperatorID().toHexString(), vertex.getName());
            }
        }
        return names;
    }

    /** A storage-less ring node in this JVM that sees the four TaskManagers, and only them. */
    private RingNode ringClient() throws IOException {
        Configuration config = new Configuration();
        config.setString("sr3.ring.role", "client");
        config.setString("sr3.ring.host", "127.0.0.1");
        config.setString("sr3.ring.seeds", String.join(";", cluster.ringSeeds()));
        config.setString("sr3.ring.replication-factor", "2");
        for (RingNode stray : LocalRing.nodes()) {
            stray.close(); // left over by an earlier test of this JVM; it would be the file system's node
        }
        RingNode client = RingNode.start(Sr3Options.nodeConfig(config));
        Set<String> taskManagers = cluster.liveTaskManagers().stream().map(FlinkProcess::ringAddress)
                .collect(Collectors.toSet());
        try {
            Deadline.poll("the test's ring client to see the TaskManagers " + taskManagers, Duration.ofSeconds(30),
                    () -> client.membership().members().stream().map(Member::id).collect(Collectors.toSet())
                            .equals(taskManagers),
                    () -> client.membership().members().toString());
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        return client;
    }
}
