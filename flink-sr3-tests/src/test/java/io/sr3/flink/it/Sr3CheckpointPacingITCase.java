package io.sr3.flink.it;

import io.sr3.flink.CheckpointPacerMXBean;
import io.sr3.flink.CheckpointPacers;
import io.sr3.flink.Sr3CheckpointStorageFactory;
import io.sr3.flink.Sr3Options;
import io.sr3.flink.Sr3PacingOptions;
import io.sr3.flink.Sr3StateBackendFactory;
import io.sr3.flink.WorkingState;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.BurstSchedule.Phase;
import io.sr3.flink.testjob.BurstSchedule;
import io.sr3.flink.testjob.BurstyRuns;
import io.sr3.flink.testjob.BurstyTestJob;
import io.sr3.flink.testjob.RecordWork;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HeartbeatManagerOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMX;
import javax.management.MBeanServer;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.sr3.flink.it.Sr3ITCaseSupport.assertExactResults;
import static io.sr3.flink.it.Sr3ITCaseSupport.assertSucceeded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checkpoint pacer, enabled by configuration alone, on a job whose input follows a scripted
 * burst (base load, a burst to ~65% of capacity, base load): with a tight recovery-time bound it
 * checkpoints more often during the burst, because the bound requires it; with a loose bound it
 * leaves the burst alone and checkpoints around it. Both runs must produce exactly the expected
 * result. The pacer runs in the MiniCluster's JobManager and talks to its REST API; its numbers
 * are read over JMX, as a user would.
 *
 * <p>Capacity is made predictable by a fixed amount of work per record in the keyed operator
 * ({@link #WORK_MICROS} of spinning per record, so busy time does not depend on how fast this
 * shared machine is). Counts of checkpoints per phase are compared, never durations.
 */
class Sr3CheckpointPacingITCase {

    private static final Logger LOG = LoggerFactory.getLogger(Sr3CheckpointPacingITCase.class);

    /** 1 ms of (blocking) work per record: at most ~1,000 records/s per keyed subtask, ~1,900/s for two. */
    static final long WORK_MICROS = 1_000;
    static final int KEYED_PARALLELISM = 2;
    static final Duration JOB_TIMEOUT = Duration.ofSeconds(120);

    /** 10 s at 200/s (~10% busy), 10 s at 1,200/s (~60-70% busy: no headroom), 8 s at 200/s. */
    static final BurstSchedule SCHEDULE = BurstSchedule.of(
            new Phase("base", 10_000, 200),
            new Phase("burst", 10_000, 1_200),
            new Phase("after", 8_000, 200));
    /**
     * The pacer sees a change of load after its rate window (1 s), a metric fetch (200 ms) and a
     * decision period (250 ms): that much of each phase's start is not counted as that phase.
     */
    static final long METRIC_LAG_MILLIS = 2_000;

    @TempDir
    Path tempDir;

    private final List<RingNode> nodes = new ArrayList<>();
    private MiniCluster miniCluster;
    private String restUrl;
    private String runId;
    private JobID jobId;

    @BeforeEach
    void startCluster() throws Exception {
        for (RingNode stray : LocalRing.nodes()) {
            stray.close();
        }
        NodeConfig base = Sr3Options.nodeConfig(sr3Options());
        for (int i = 0; i < 2; i++) {
            nodes.add(RingNode.start(base.withPortAndStore(0, tempDir.resolve("ring-node-" + i))));
        }
        Deadline.poll("ring membership", Duration.ofSeconds(30),
                () -> nodes.stream().allMatch(n -> n.membership().members().size() == nodes.size()));
        Configuration cluster = flinkSr3Options();
        cluster.set(RestOptions.BIND_PORT, "0");
        cluster.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("48m"));
        cluster.set(HeartbeatManagerOptions.HEARTBEAT_INTERVAL, Duration.ofSeconds(1));
        cluster.set(HeartbeatManagerOptions.HEARTBEAT_TIMEOUT, Duration.ofSeconds(5));
        // What the pacer reads must be fresh: the defaults (10 s, 3 s) would hide a 10 s burst.
        cluster.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofMillis(200));
        cluster.set(RestOptions.CACHE_CHECKPOINT_STATISTICS_TIMEOUT, Duration.ofMillis(200));
        cluster.set(WebOptions.REFRESH_INTERVAL, Duration.ofMillis(200));
        cluster.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 1000);
        cluster.setString("io.tmp.dirs", tempDir.resolve("flink-tmp").toString());
        miniCluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(cluster).setNumTaskManagers(1).setNumSlotsPerTaskManager(KEYED_PARALLELISM).build());
        miniCluster.start();
        restUrl = miniCluster.getRestAddress().get(30, TimeUnit.SECONDS).toString();
    }

    @AfterEach
    void stopCluster() throws Exception {
        try {
            if (miniCluster != null && jobId != null && !miniCluster.getJobStatus(jobId).get().isGloballyTerminalState()) {
                // A test that failed early leaves its job running; the cluster closes quickly only without it.
                miniCluster.cancelJob(jobId).get(30, TimeUnit.SECONDS);
                miniCluster.requestJobResult(jobId).get(60, TimeUnit.SECONDS);
            }
        } finally {
            closeClusterAndRing();
        }
    }

    private void closeClusterAndRing() throws Exception {
        try {
            if (miniCluster != null) {
                miniCluster.close();
            }
        } finally {
            nodes.forEach(RingNode::close);
            if (runId != null) {
                RunRegistry.remove(runId);
                BurstyRuns.remove(runId);
            }
        }
    }

    /**
     * Bound 6 s, detection 1 s: at base load the allowed age is ~35 s and the pacer paces at
     * Young's interval (~8-11 s for MTBF 10 min and checkpoints of 50-100 ms); in the burst it
     * shrinks to ~1-1.5 s, so the pacer must
     * checkpoint several times inside the burst, for the age bound.
     */
    @Test
    void checkpointsMoreOftenDuringABurstWhenTheBoundRequiresIt() throws Exception {
        Outcome outcome = run("tight", Duration.ofSeconds(6));

        assertThat(outcome.pacer.getTriggersAgeBound()).as("checkpoints triggered for the age bound; %s", outcome)
                .isPositive();
        assertThat(outcome.inPhase("burst")).as("checkpoints in the burst vs. before it; %s", outcome)
                .isGreaterThan(outcome.inPhase("base"));
    }

    /**
     * Bound 2 min: even in the burst the allowed age (~30 s or more) outlasts the burst, so the
     * pacer waits for headroom and triggers nothing while the keyed subtasks are busy; it
     * checkpoints at Young's interval before and after.
     */
    @Test
    void leavesTheBurstAloneWhenTheBoundAllows() throws Exception {
        Outcome outcome = run("loose", Duration.ofMinutes(2));

        assertThat(outcome.inPhase("burst")).as("checkpoints in the burst; %s", outcome).isZero();
        assertThat(outcome.pacer.getTriggersSteadyInterval() + outcome.pacer.getTriggersCheapestMoment())
                .as("checkpoints at calm moments; %s", outcome).isPositive();
        assertThat(outcome.pacer.getTriggersAgeBound()).as("checkpoints forced by the bound; %s", outcome).isZero();
        assertThat(outcome.pacer.getBoundUnreachable()).isZero();
    }

    private Outcome run(String scenario, Duration bound) throws Exception {
        runId = "pacing-" + scenario + "-" + System.nanoTime();
        TestJobSpec spec = BurstyTestJob.spec(runId, SCHEDULE).withKeys(64);
        Configuration job = flinkSr3Options();
        // Flink's periodic checkpoints stay on as the safety maximum; an hour never fires in this test.
        job.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        job.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, 10);
        job.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        job.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 5);
        job.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 1000);
        // Enabling the pacer is configuration only.
        job.set(Sr3PacingOptions.ENABLED, true);
        job.set(Sr3PacingOptions.MAX_RECOVERY_TIME, bound);
        job.set(Sr3PacingOptions.FAILURE_DETECTION_TIME, Duration.ofSeconds(1));
        job.set(Sr3PacingOptions.MTBF, Duration.ofMinutes(10));
        job.set(Sr3PacingOptions.REST_URL, restUrl);

        StreamExecutionEnvironment env = new StreamExecutionEnvironment(job);
        env.setParallelism(KEYED_PARALLELISM);
        BurstyTestJob.addToEnvironment(env, spec, SCHEDULE, RecordWork.blocking(WORK_MICROS), 1_000);
        jobId = miniCluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
        CompletableFuture<JobResult> result = miniCluster.requestJobResult(jobId);

        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Deadline.poll("the pacer to start", JOB_TIMEOUT, () -> CheckpointPacers.running(jobId.toString()).isPresent()
                || result.isDone());
        CheckpointPacerMXBean pacer = CheckpointPacers.running(jobId.toString())
                .orElseThrow(() -> new AssertionError("No pacer ran for job " + jobId));
        CheckpointPacerMXBean overJmx = JMX.newMXBeanProxy(server, CheckpointPacers.objectName(jobId.toString()),
                CheckpointPacerMXBean.class);
        assertThat(overJmx.getMaxRecoveryTimeMillis()).isEqualTo(bound.toMillis());
        Deadline.poll("the job to finish", JOB_TIMEOUT, result::isDone);
        JobResult jobResult = result.get();
        RunRegistry.Run run = RunRegistry.run(runId);
        assertSucceeded(jobResult, run);
        assertExactResults(spec);

        long origin = BurstyRuns.run(runId).originIfStarted();
        List<Long> triggers = new ArrayList<>();
        for (AbstractCheckpointStats c : miniCluster.getExecutionGraph(jobId).get(30, TimeUnit.SECONDS)
                .getCheckpointStatsSnapshot().getHistory().getCheckpoints()) {
            if (c.getStatus() == CheckpointStatsStatus.COMPLETED) {
                triggers.add(c.getTriggerTimestamp() - origin);
            }
        }
        triggers.sort(Long::compare);
        Outcome outcome = new Outcome(scenario, pacer, triggers);
        LOG.info("Pacing scenario {}: {}", scenario, outcome);
        return outcome;
    }

    /** What one run did: the pacer's counters and the completed checkpoints' trigger times after the origin. */
    private record Outcome(String scenario, CheckpointPacerMXBean pacer, List<Long> triggerOffsets) {

        /** Completed checkpoints triggered in the phase, its first {@link #METRIC_LAG_MILLIS} excluded. */
        long inPhase(String phase) {
            List<long[]> bounds = SCHEDULE.phaseBounds();
            for (int i = 0; i < SCHEDULE.phases().size(); i++) {
                if (SCHEDULE.phases().get(i).name().equals(phase)) {
                    long from = bounds.get(i)[0] + METRIC_LAG_MILLIS;
                    long to = bounds.get(i)[1];
                    return triggerOffsets.stream().filter(t -> t >= from && t < to).count();
                }
            }
            throw new IllegalArgumentException("No phase " + phase);
        }

        @Override
        public String toString() {
            return String.format("%s: checkpoints triggered at (ms after origin) %s; pacer: age bound %d, cheapest "
                            + "moment %d, steady %d, decisions %d, last bound %d ms, est. recovery %d ms, unreachable %d, "
                            + "falling back %d", scenario, triggerOffsets, pacer.getTriggersAgeBound(),
                    pacer.getTriggersCheapestMoment(), pacer.getTriggersSteadyInterval(), pacer.getDecisions(),
                    pacer.getCheckpointAgeBoundMillis(), pacer.getEstimatedRecoveryTimeMillis(),
                    pacer.getBoundUnreachable(), pacer.getFallingBack());
        }
    }

    private static Configuration sr3Options() {
        Configuration c = new Configuration();
        c.set(Sr3Options.WORKING_STATE, WorkingState.HEAP);
        c.set(Sr3Options.REPLICATION_FACTOR, 2);
        c.set(Sr3Options.FAILURE_DETECTOR_INTERVAL, Duration.ofMillis(200));
        c.set(Sr3Options.FAILURE_DETECTOR_TIMEOUT, Duration.ofSeconds(2));
        c.set(Sr3Options.REQUEST_TIMEOUT, Duration.ofSeconds(3));
        return c;
    }

    private Configuration flinkSr3Options() {
        Configuration c = sr3Options();
        c.set(StateBackendOptions.STATE_BACKEND, Sr3StateBackendFactory.class.getName());
        c.set(CheckpointingOptions.CHECKPOINT_STORAGE, Sr3CheckpointStorageFactory.class.getName());
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, "sr3:///it-pacing/" + tempDir.getFileName());
        c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        return c;
    }
}
