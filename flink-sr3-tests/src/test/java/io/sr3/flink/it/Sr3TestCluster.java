package io.sr3.flink.it;

import io.sr3.flink.Sr3CheckpointStorageFactory;
import io.sr3.flink.Sr3Options;
import io.sr3.flink.Sr3StateBackendFactory;
import io.sr3.flink.WorkingState;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testing.EmbeddedCluster;
import io.sr3.flink.testjob.StatefulTestJob;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One test's world: an {@link TestingRing} of {@code ringNodes} sr3 ring nodes (the first one serves
 * the {@code sr3://} FileSystem), then an {@link EmbeddedCluster} of {@code 3 x 2} slots, and jobs of
 * {@link StatefulTestJob} configured for flink-sr3. {@link #close} stops the MiniCluster before
 * the ring nodes, so nothing of the job touches the ring after its nodes are gone.
 */
final class Sr3TestCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Sr3TestCluster.class);

    static final int TASK_MANAGERS = 3;
    static final int SLOTS_PER_TASK_MANAGER = 2;
    static final int MAX_PARALLELISM = 128;
    static final Duration JOB_TIMEOUT = Duration.ofSeconds(90);

    private final WorkingState workingState;
    private final Consumer<Configuration> sr3Tweaks;
    private final String checkpointDirectory;
    private final TestingRing ring;
    private final EmbeddedCluster cluster;

    Sr3TestCluster(Path tempDir, WorkingState workingState, int ringNodes) throws Exception {
        this(tempDir, workingState, ringNodes, c -> {});
    }

    /** A cluster whose {@code sr3.*} options are the test defaults adjusted by {@code sr3Tweaks}. */
    Sr3TestCluster(Path tempDir, WorkingState workingState, int ringNodes, Consumer<Configuration> sr3Tweaks) throws Exception {
        this.workingState = workingState;
        this.sr3Tweaks = sr3Tweaks;
        this.checkpointDirectory = "sr3:///it/" + tempDir.getFileName() + "-" + System.nanoTime();
        ring = TestingRing.start(sr3Options(), ringNodes, tempDir.resolve("ring"));
        try {
            Configuration config = flinkSr3Options();
            config.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("48m"));
            // Spread slots so that every TaskManager runs a task of a job with parallelism 3.
            config.set(TaskManagerOptions.TASK_MANAGER_LOAD_BALANCE_MODE, TaskManagerOptions.TaskManagerLoadBalanceMode.SLOTS);
            cluster = EmbeddedCluster.start(config, TASK_MANAGERS, SLOTS_PER_TASK_MANAGER, tempDir.resolve("flink"));
        } catch (Exception | Error e) {
            ring.close();
            throw e;
        }
    }

    MiniCluster miniCluster() {
        return cluster.miniCluster();
    }

    /** The ring nodes this test started, oldest (the FileSystem's) first. */
    List<RingNode> nodes() {
        return ring.nodes();
    }

    /**
     * The {@code sr3.*} keys every MiniCluster test starts from: replication factor 2, fast failure
     * detection, and a short request deadline (loopback answers in milliseconds; a short deadline
     * keeps requests to stopped nodes short).
     */
    static Configuration fastRingOptions() {
        Configuration c = new Configuration();
        c.set(Sr3Options.REPLICATION_FACTOR, 2);
        c.set(Sr3Options.FAILURE_DETECTOR_INTERVAL, Duration.ofMillis(200));
        c.set(Sr3Options.FAILURE_DETECTOR_TIMEOUT, Duration.ofSeconds(2));
        c.set(Sr3Options.REQUEST_TIMEOUT, Duration.ofSeconds(3));
        return c;
    }

    /** Everything that makes a job use flink-sr3 with checkpoints under {@code directory}, as a user would configure it. */
    static void checkpointOnTheRing(Configuration c, String directory) {
        c.set(StateBackendOptions.STATE_BACKEND, Sr3StateBackendFactory.class.getName());
        c.set(CheckpointingOptions.CHECKPOINT_STORAGE, Sr3CheckpointStorageFactory.class.getName());
        // Must be explicit: anything but sr3:// is rejected by the storage factory.
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, directory);
        // Nothing inlined into _metadata: every state object is a file on the ring.
        c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
    }

    /** The sr3 keys of this test: {@link #fastRingOptions()}, small blocks so files span several blocks. */
    private Configuration sr3Options() {
        Configuration c = fastRingOptions();
        c.set(Sr3Options.WORKING_STATE, workingState);
        c.set(Sr3Options.BLOCK_SIZE, MemorySize.parse("8kb"));
        sr3Tweaks.accept(c);
        return c;
    }

    private Configuration flinkSr3Options() {
        Configuration c = sr3Options();
        checkpointOnTheRing(c, checkpointDirectory);
        return c;
    }

    /** The job configuration every test starts from; {@code tweaks} adjusts it. */
    Configuration jobConfiguration(Consumer<Configuration> tweaks) {
        Configuration c = flinkSr3Options();
        c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(300));
        c.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, 10);
        c.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        c.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 20);
        c.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        tweaks.accept(c);
        return c;
    }

    /** Only manual checkpoints ({@link MiniCluster#triggerCheckpoint}): the periodic trigger will not fire in a test's lifetime. */
    static void manualCheckpointsOnly(Configuration c) {
        c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        c.set(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS, Duration.ofMinutes(30));
    }

    JobID submit(TestJobSpec spec, int parallelism, Configuration jobConfiguration) throws Exception {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(jobConfiguration);
        env.setParallelism(parallelism);
        env.setMaxParallelism(MAX_PARALLELISM);
        StatefulTestJob.addToEnvironment(env, spec);
        JobID jobId = cluster.submit(env.getStreamGraph().getJobGraph());
        LOG.info("Submitted run {} as job {} with parallelism {} ({})", spec.runId(), jobId, parallelism, workingState);
        return jobId;
    }

    JobResult awaitResult(JobID jobId) throws Exception {
        return cluster.awaitResult(jobId, JOB_TIMEOUT);
    }

    /** Triggers a checkpoint, retrying while the job's tasks are still being deployed; returns its path. */
    String triggerCheckpoint(JobID jobId) {
        String[] path = new String[1];
        Exception[] last = new Exception[1];
        Deadline.poll("a checkpoint of " + jobId, JOB_TIMEOUT, () -> {
            try {
                path[0] = cluster.miniCluster().triggerCheckpoint(jobId).get(JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                return true;
            } catch (Exception e) {
                last[0] = e;
                LOG.info("Checkpoint of {} not possible yet ({}); retrying", jobId, e.getMessage());
                return false;
            }
        }, () -> "last failure: " + last[0]);
        return path[0];
    }

    /**
     * Polls {@code condition} while the job is not terminal; fails at once, with the job's failure,
     * if the job ended first.
     */
    void awaitWhileJobRuns(JobID jobId, String what, BooleanSupplier condition) {
        Deadline.poll(what, JOB_TIMEOUT, () -> {
            if (condition.getAsBoolean()) {
                return true;
            }
            JobStatus status = cluster.miniCluster().getJobStatus(jobId).join();
            if (status.isGloballyTerminalState()) {
                String failure;
                try {
                    failure = awaitResult(jobId).getSerializedThrowable()
                            .map(t -> t.getFullStringifiedStackTrace()).orElse("none");
                } catch (Exception e) {
                    failure = e.toString();
                }
                throw new AssertionError("Job " + jobId + " ended " + status + " while waiting for " + what
                        + "; failure: " + failure);
            }
            return false;
        });
    }

    @Override
    public void close() throws Exception {
        IOUtils.closeAll(cluster, ring);
    }
}
