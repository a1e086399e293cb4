package io.sr3.flink.it;

import io.sr3.flink.CheckpointPacerMXBean;
import io.sr3.flink.CheckpointPacers;
import io.sr3.flink.Sr3Options;
import io.sr3.flink.Sr3PacingOptions;
import io.sr3.flink.WorkingState;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testing.EmbeddedCluster;
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
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.IOUtils;
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

    private TestingRing ring;
    private EmbeddedCluster cluster;
    private String restUrl;
    private String runId;

    @BeforeEach
    void startCluster() throws Exception {
        ring = TestingRing.start(sr3Options(), 2, tempDir.resolve("ring"));
        Configuration config = flinkSr3Options();
        config.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("48m"));
        // What the pacer reads must be fresh: the defaults (10 s, 3 s) would hide a 10 s burst.
        config.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofMillis(200));
        config.set(RestOptions.CACHE_CHECKPOINT_STATISTICS_TIMEOUT, Duration.ofMillis(200));
        config.set(WebOptions.REFRESH_INTERVAL, Duration.ofMillis(200));
        config.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 1000);
        cluster = EmbeddedCluster.start(config, 1, KEYED_PARALLELISM, tempDir.resolve("flink"));
        restUrl = cluster.restUrl();
    }

    @AfterEach
    void stopCluster() throws Exception {
        try {
            IOUtils.closeAll(cluster, ring);
        } finally {
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
        JobID jobId = cluster.submit(env.getStreamGraph().getJobGraph());
        CompletableFuture<JobResult> result = cluster.miniCluster().requestJobResult(jobId);

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
        for (AbstractCheckpointStats c : cluster.graph(jobId).getCheckpointStatsSnapshot().getHistory().getCheckpoints()) {
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
        Configuration c = Sr3TestCluster.fastRingOptions();
        c.set(Sr3Options.WORKING_STATE, WorkingState.HEAP);
        return c;
    }

    private Configuration flinkSr3Options() {
        Configuration c = sr3Options();
        Sr3TestCluster.checkpointOnTheRing(c, "sr3:///it-pacing/" + tempDir.getFileName());
        return c;
    }
}
