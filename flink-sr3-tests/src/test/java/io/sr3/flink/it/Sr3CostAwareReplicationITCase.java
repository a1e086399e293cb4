package io.sr3.flink.it;

import io.sr3.flink.Sr3Options;
import io.sr3.flink.Sr3PacingOptions;
import io.sr3.flink.Sr3ReplicationOptions;
import io.sr3.flink.WorkingState;
import io.sr3.flink.fs.FileBlock;
import io.sr3.flink.fs.Sr3FileSystem;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.replication.ReplicationMode;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testing.EmbeddedCluster;
import io.sr3.flink.testjob.StatefulTestJob;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.IOUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;


import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sr3.replication.mode: cost-aware} by configuration alone, in a MiniCluster over a ring of
 * four nodes with replication factor 2: a job of two independent pipelines, one whose keyed state
 * is tiny (its loss costs as much as the other's, for a fraction of the bytes) and one whose
 * state is about a hundred times larger. At a budget of 2.3 copies per byte, the JobManager's
 * planner gives the small, costly state 3 copies and the large one 2, and the checkpoint files on
 * the ring show it: each file's manifest asks for that many copies, and each of its blocks has
 * that many holders. With heap state (full snapshots) and with RocksDB (incremental, whose shared
 * files are created once and reused).
 */
class Sr3CostAwareReplicationITCase {

    private static final Duration DEADLINE = Duration.ofSeconds(90);

    @TempDir
    Path tempDir;

    private TestingRing ring;
    private EmbeddedCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        ring = TestingRing.start(sr3Options(), 4, tempDir.resolve("ring"));
        Configuration config = sr3Options();
        config.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("48m"));
        config.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofMillis(500));
        config.set(RestOptions.CACHE_CHECKPOINT_STATISTICS_TIMEOUT, Duration.ofMillis(200));
        cluster = EmbeddedCluster.start(config, 1, 2, tempDir.resolve("flink"));
    }

    @AfterEach
    void stopCluster() throws Exception {
        IOUtils.closeAll(cluster, ring);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(WorkingState.class)
    void theSmallCostlyStateGetsThreeCopiesAndTheLargeCheapStateTwo(WorkingState workingState) throws Exception {
        String restUrl = cluster.restUrl();
        Configuration job = sr3Options();
        job.set(Sr3Options.WORKING_STATE, workingState);
        job.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        Sr3TestCluster.checkpointOnTheRing(job, "sr3:///it-replication/" + tempDir.getFileName());
        job.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(1));
        job.set(Sr3ReplicationOptions.MODE, ReplicationMode.COST_AWARE);
        job.set(Sr3ReplicationOptions.BUDGET, 2.3);
        job.set(Sr3ReplicationOptions.INTERVAL, Duration.ofSeconds(1));
        job.set(Sr3PacingOptions.REST_URL, restUrl);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(job);
        env.setParallelism(2);
        // Same rate, same topology, so the same failure cost; ~200 bytes of keyed state against ~1 MiB.
        TestJobSpec costly = TestJobSpec.of("costly").withRecords(100_000_000, 500).withKeys(4).withPayload(8, 1);
        TestJobSpec cheap = TestJobSpec.of("cheap").withRecords(100_000_000, 500).withKeys(2_000).withPayload(512, 1);
        StatefulTestJob.build(env, costly, "-costly").sinkTo(new DiscardingSink<>()).name("sink-costly");
        StatefulTestJob.build(env, cheap, "-cheap").sinkTo(new DiscardingSink<>()).name("sink-cheap");
        JobGraph graph = env.getStreamGraph().getJobGraph();
        JobID jobId = cluster.submit(graph);

        Sr3FileSystem fs = (Sr3FileSystem) Sr3FileSystem.unwrap(
                new org.apache.flink.core.fs.Path("sr3:///").getFileSystem());
        org.apache.flink.core.fs.Path jobDir = new org.apache.flink.core.fs.Path(
                "sr3:///it-replication/" + tempDir.getFileName() + "/" + jobId);
        Map<String, List<Integer>> seen = new HashMap<>();
        // Every poll reads the metadata and the manifests of a whole checkpoint: not more often than every 250 ms.
        Deadline.in(DEADLINE).pollEvery(Duration.ofMillis(250),
                "a checkpoint whose costly state has 3 copies and cheap state 2, per file and per block", () -> {
            try {
                seen.clear();
                seen.putAll(copiesByVertex(fs, jobDir, graph));
                return seen.getOrDefault("keyed-state-costly", List.of()).stream().allMatch(c -> c == 3)
                        && !seen.getOrDefault("keyed-state-costly", List.of()).isEmpty()
                        && seen.getOrDefault("keyed-state-cheap", List.of()).stream().allMatch(c -> c == 2)
                        && !seen.getOrDefault("keyed-state-cheap", List.of()).isEmpty();
            } catch (IOException e) {
                return false; // a checkpoint being written or subsumed while read: the next poll reads another
            }
        }, () -> "copies per file of the latest checkpoint, by vertex: " + seen);
        assertThat(seen.get("keyed-state-costly")).as("copies per file of the costly state").isNotEmpty().containsOnly(3);
        assertThat(seen.get("keyed-state-cheap")).as("copies per file of the cheap state").isNotEmpty().containsOnly(2);
    }

    /**
     * For the latest completed checkpoint of the job: per job vertex name, for every file its
     * keyed state handles name, the copies its manifest asks for, or -1 where some block of the
     * file has a different number of holders.
     */
    private static Map<String, List<Integer>> copiesByVertex(Sr3FileSystem fs, org.apache.flink.core.fs.Path jobDir,
            JobGraph graph) throws IOException {
        org.apache.flink.core.fs.Path latest = null;
        long latestId = -1;
        if (!fs.exists(jobDir)) {
            return Map.of();
        }
        for (FileStatus child : fs.listStatus(jobDir)) {
            String name = child.getPath().getName();
            if (name.startsWith("chk-") && fs.exists(new org.apache.flink.core.fs.Path(child.getPath(), "_metadata"))) {
                long id = Long.parseLong(name.substring(4));
                if (id > latestId) {
                    latestId = id;
                    latest = child.getPath();
                }
            }
        }
        if (latest == null) {
            return Map.of();
        }
        Map<String, String> vertexOfOperator = new HashMap<>();
        for (JobVertex vertex : graph.getVertices()) {
            for (OperatorIDPair ids : vertex.getOperatorIDs()) {
                vertexOfOperator.put(ids.getGeneratedOperatorID().toHexString(), vertex.getName());
            }
        }
        CheckpointMetadata metadata;
        try (FSDataInputStream in = fs.open(new org.apache.flink.core.fs.Path(latest, "_metadata"))) {
            metadata = Checkpoints.loadCheckpointMetadata(new DataInputStream(in),
                    Sr3CostAwareReplicationITCase.class.getClassLoader(), latest.toString());
        }
        Map<String, List<Integer>> copies = new HashMap<>();
        for (OperatorState operator : metadata.getOperatorStates()) {
            String vertexName = vertexOfOperator.getOrDefault(operator.getOperatorID().toHexString(), "?");
            String vertex = vertexName.contains("keyed-state-costly") ? "keyed-state-costly"
                    : vertexName.contains("keyed-state-cheap") ? "keyed-state-cheap" : vertexName;
            for (OperatorSubtaskState subtask : operator.getStates()) {
                for (KeyedStateHandle handle : subtask.getManagedKeyedState()) {
                    for (FileStateHandle file : files(handle)) {
                        copies.computeIfAbsent(vertex, v -> new ArrayList<>()).add(copiesOf(fs, file));
                    }
                }
            }
        }
        return copies;
    }

    /** The files a heap (full) or RocksDB (incremental) keyed state handle names. */
    private static List<FileStateHandle> files(KeyedStateHandle handle) {
        List<FileStateHandle> files = new ArrayList<>();
        if (handle instanceof KeyGroupsStateHandle groups && groups.getDelegateStateHandle() instanceof FileStateHandle file) {
            files.add(file);
        } else if (handle instanceof IncrementalRemoteKeyedStateHandle incremental) {
            List<HandleAndLocalPath> parts = new ArrayList<>(incremental.getSharedState());
            parts.addAll(incremental.getPrivateState());
            for (HandleAndLocalPath part : parts) {
                if (part.getHandle() instanceof FileStateHandle file) {
                    files.add(file);
                }
            }
            if (incremental.getMetaDataStateHandle() instanceof FileStateHandle meta) {
                files.add(meta);
            }
        }
        return files;
    }

    private static int copiesOf(Sr3FileSystem fs, FileStateHandle file) throws IOException {
        int asked = fs.getFileStatus(file.getFilePath()).getReplication();
        for (FileBlock block : fs.fileBlocks(file.getFilePath())) {
            if (block.holders().size() != asked) {
                return -1;
            }
        }
        return asked;
    }

    private static Configuration sr3Options() {
        return Sr3TestCluster.fastRingOptions();
    }
}
