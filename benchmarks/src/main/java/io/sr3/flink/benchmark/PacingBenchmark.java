package io.sr3.flink.benchmark;

import io.sr3.flink.CheckpointPacerMXBean;
import io.sr3.flink.CheckpointPacers;
import io.sr3.flink.harness.BenchmarkMain;
import io.sr3.flink.harness.FlinkSettings;
import io.sr3.flink.harness.JobProbe;
import io.sr3.flink.harness.Json;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.ResultFiles;
import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.harness.TestJobs;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.EmbeddedCluster;
import io.sr3.flink.testjob.BurstSchedule.Phase;
import io.sr3.flink.testjob.BurstSchedule;
import io.sr3.flink.testjob.BurstyRuns;
import io.sr3.flink.testjob.BurstyTestJob;
import io.sr3.flink.testjob.LatencyHistogram;
import io.sr3.flink.testjob.ProcessingLog;
import io.sr3.flink.testjob.RecordWork;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import javax.annotation.Nullable;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The load-aware checkpoint pacer against fixed checkpoint intervals, on the same bursty job with
 * failures injected at the same random moments, in one invocation.
 *
 * <p>Job: {@link BurstyTestJob} with heap working state and full (non-incremental) snapshots on a
 * 3-node in-JVM ring: 4 cycles of 8 s at 300 records/s and 5 s at 2,000 records/s, then 6 s at
 * 300/s. The keyed operator spends 400 us of CPU per record on each of 2 subtasks and keeps 64 KiB
 * of unchanging state per key besides the test's own, ~270 MiB in all. So every checkpoint
 * serializes and ships the whole state, which takes CPU that the keyed operator needs during a
 * burst: the cost of a checkpoint depends on when it is taken, which is what pacing is about. In
 * every round, {@link #FAILURES_PER_RUN} failures are injected at moments drawn from a seeded
 * random generator (the same moments for every configuration of a round), each once the previous
 * one has caught up. A first run of the last setup, not reported, warms the JVM up (round 0). The
 * first cycle of every run is a warm-up without failures: a pacer in production has seen
 * its job's bursts long before a failure, and one that never saw a whole burst has nothing to
 * learn their length from (before 2026-11-30 evening, 3 cycles with failures from 7 s on).
 *
 * <p>Measured per failure: recovery time = from the failure (the injector throws) to the moment
 * the job's output caught up: the restarted source emits a record at most
 * {@link #CAUGHT_UP_MILLIS} after it was due (the replay backlog is read), and every record due
 * until then has been processed. Per run, leaving out the records due in the first load cycle
 * (the warm-up, in which the pacer learns the load): p99 end-to-end latency (due time of a record
 * in the schedule to the end of its processing) of each record at its first processing, which is
 * when its result is out; also with replayed records counted again, and over the records
 * processed outside the recovery windows. Results must be exact.
 *
 * <p>Configurations: the pacer with {@code sr3.pacing.max-recovery-time} = {@link #BOUND} and
 * Flink's interval at {@link #SAFETY_INTERVAL} as the safety maximum;
 * fixed intervals of 1 s, 3 s and 6 s. The run is 20x faster than a production cycle (a 13 s load cycle for ~4 min), so
 * Flink's typical 1 minute interval appears as 3 s.
 *
 * <p>Usage: {@code mvn -B -q -pl benchmarks exec:exec@pacing-benchmark}; the only argument is the
 * results directory ({@code pacing-<date>-<commit>.md} and {@code .json}). {@code -Dsr3.bench.rounds} and
 * {@code -Dsr3.bench.fixed} (seconds, comma separated) shorten it for a smoke run.
 * {@code -Dsr3.bench.failures} (milliseconds after the schedule's start, comma separated) replaces
 * the random failure moments with chosen ones, such as the end of each burst, where a fixed
 * interval's checkpoint is oldest; results then go to {@code pacing-chosen-moments-<date>-<commit>.md}.
 * {@code -Dsr3.bench.burst-rate} (records/s, default 2,000) sets the bursts' rate; results of
 * another rate go to {@code pacing-bursts-<rate>-<date>-<commit>.md}.
 */
public final class PacingBenchmark {

    static final double DEFAULT_BURST_RATE = 2_000;
    /**
     * Records per second in a burst. The default is about 60% of what the job processes on this
     * machine; {@code -Dsr3.bench.burst-rate} runs bursts closer to that capacity.
     */
    static final double BURST_RATE = Double.parseDouble(System.getProperty("sr3.bench.burst-rate",
            String.valueOf(DEFAULT_BURST_RATE)));
    static final BurstSchedule SCHEDULE = BurstSchedule.of(
            new Phase("base", 8_000, 300), new Phase("burst", 5_000, BURST_RATE),
            new Phase("base", 8_000, 300), new Phase("burst", 5_000, BURST_RATE),
            new Phase("base", 8_000, 300), new Phase("burst", 5_000, BURST_RATE),
            new Phase("base", 8_000, 300), new Phase("burst", 5_000, BURST_RATE),
            new Phase("tail", 6_000, 300));
    static final RecordWork WORK = RecordWork.cpu(400).withBallast(64 << 10);
    /**
     * A restarted source has caught up once it emits a record at most this long after it was due:
     * the replay backlog is drained, as the recovery-time model assumes (on time, it emits within
     * a few ms).
     */
    static final long CAUGHT_UP_MILLIS = 100;
    static final int KEYED_PARALLELISM = 2;
    static final int KEYS = 4_096;
    static final int PAYLOAD_BYTES = 1_024;
    static final int PAYLOAD_SLOTS = 4;
    static final Duration BOUND = Duration.ofSeconds(8);
    /** An injected exception is seen at once; then the 200 ms restart delay and the redeployment. */
    static final Duration FAILURE_DETECTION = Duration.ofMillis(500);
    /** The mean time between the injected failures (at least {@link #MIN_GAP_MILLIS} apart), as a user would configure it. */
    static final Duration MTBF = Duration.ofSeconds(15);
    static final Duration SAFETY_INTERVAL = Duration.ofSeconds(20);
    static final List<Duration> FIXED = fixedIntervals(System.getProperty("sr3.bench.fixed", "1,3,6"));
    /** Failure moments chosen on the command line, or empty for random ones. */
    static final List<Long> CHOSEN_FAILURES = Arrays.stream(System.getProperty("sr3.bench.failures", "").split(","))
            .filter(x -> !x.isBlank()).map(x -> Long.parseLong(x.trim())).toList();
    static final int ROUNDS = Integer.getInteger("sr3.bench.rounds", 3);
    static final int FAILURES_PER_RUN = 3;
    /**
     * Failures are drawn in [FIRST_FAILURE, schedule end - 10 s), at least MIN_GAP apart; the first
     * one 5 s after the first burst (warm-up: the job works off the burst's lag for a few seconds).
     */
    static final long FIRST_FAILURE_MILLIS = 18_000;
    /**
     * Records due in the first load cycle (quiet phase and burst) are left out of the latency
     * numbers: a pacer has seen many bursts before a failure in production, and learns this job's
     * in that cycle.
     */
    static final long WARM_UP_MILLIS = SCHEDULE.phaseBounds().get(1)[1];
    static final long MIN_GAP_MILLIS = 12_000;
    /** Recovery of a failure after which the job never caught up before its input ended. */
    static final long NOT_CAUGHT_UP = -1;
    static final String COMMAND = "mvn -B -q -pl benchmarks exec:exec@pacing-benchmark" + nonDefaultProperties();

    private final long start = System.currentTimeMillis();
    private final Path tmp;

    private PacingBenchmark(Path tmp) {
        this.tmp = tmp;
    }

    public static void main(String[] args) {
        BenchmarkMain.run("PacingBenchmark", args, (tmp, results) -> new PacingBenchmark(tmp).run(results));
    }

    /** One configuration: the pacer, or a fixed interval. */
    record Setup(String label, @Nullable Duration fixedInterval) {
        boolean paced() {
            return fixedInterval == null;
        }
    }

    /** What one run measured. */
    record Run(String setup, int round, List<Long> failureOffsets, List<Long> recoveries, List<Long> predicted,
            long p99First, long p99FirstWithWarmUp, long p99, long p99Steady, long p99Bursts, long p99Quiet, long p50,
            long records, long checkpoints, long checkpointsInBursts, long meanCheckpointMillis, long maxStateBytes,
            boolean exact, Map<String, Long> pacerTriggers) {}

    private int run(Path resultsDirectory) throws Exception {
        MachineDescription machine = MachineDescription.ofThisMachine();
        List<Setup> setups = new ArrayList<>();
        setups.add(new Setup("pacer (bound " + BOUND.toSeconds() + " s)", null));
        for (Duration d : FIXED) {
            setups.add(new Setup("fixed " + d.toSeconds() + " s", d));
        }
        say("pacing benchmark: %d rounds x %d setups, %d failures per run; machine %d cpus, load %s", ROUNDS,
                setups.size(), FAILURES_PER_RUN, machine.processors(), machine.loadAverage());
        // Round 0: a run whose numbers are not kept. The first run in a JVM pays for class loading
        // and JIT compilation (its checkpoints took 1.5 s where later ones took 0.8-0.9 s), and the
        // setup that ran first, always the pacer, paid it alone.
        Setup warmUp = setups.get(setups.size() - 1);
        say("JVM warm-up: one run of %s, not reported", warmUp.label());
        runOnce(warmUp, 0, failureOffsets(new Random(0)));
        List<Run> runs = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            List<Long> failures = CHOSEN_FAILURES.isEmpty() ? failureOffsets(new Random(4242L * round)) : CHOSEN_FAILURES;
            for (Setup setup : setups) {
                Run r = runOnce(setup, round, failures);
                runs.add(r);
                say("%s round %d: recoveries %s ms, p99 %d ms (with warm-up %d ms; every processing %d ms; outside "
                        + "recovery %d ms: bursts %d, quiet %d), p50 %d ms, %d checkpoints (%d in bursts, mean %d ms, "
                        + "up to %d MiB), pacer %s, results %s; pacer predicted %s", setup.label(), round,
                        r.recoveries(), r.p99First(), r.p99FirstWithWarmUp(), r.p99(), r.p99Steady(), r.p99Bursts(),
                        r.p99Quiet(), r.p50(), r.checkpoints(), r.checkpointsInBursts(),
                        r.meanCheckpointMillis(), r.maxStateBytes() >> 20, r.pacerTriggers(),
                        r.exact() ? "exact" : "WRONG", r.predicted());
            }
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", PacingBenchmark.class.getName());
        json.put("measuredAtUtc", Instant.now().toString());
        json.put("command", COMMAND);
        json.put("machine", machine.toMap());
        json.put("parameters", PacingReport.parameters());
        json.put("runs", PacingReport.runsJson(runs));
        String summary = PacingReport.summary(setups, runs);
        json.put("summary", summary);
        Files.createDirectories(resultsDirectory);
        String name = ResultFiles.newBaseName(resultsDirectory, (CHOSEN_FAILURES.isEmpty() ? "pacing" : "pacing-chosen-moments")
                + (BURST_RATE == DEFAULT_BURST_RATE ? "" : "-bursts-" + Math.round(BURST_RATE)));
        Path jsonFile = resultsDirectory.resolve(name + ".json");
        Path mdFile = resultsDirectory.resolve(name + ".md");
        Files.writeString(jsonFile, Json.write(json), StandardCharsets.UTF_8);
        String plot = ResultPlots.writeAndEmbed(jsonFile, "p99 latency and longest recovery per setup, against the bound");
        Files.writeString(mdFile, PacingReport.markdown(machine, setups, runs, summary, plot), StandardCharsets.UTF_8);
        System.out.println();
        System.out.println(summary);
        say("wrote %s and %s", mdFile, jsonFile);
        return runs.stream().allMatch(Run::exact) ? 0 : 1;
    }

    private static List<Duration> fixedIntervals(String seconds) {
        List<Duration> out = new ArrayList<>();
        for (String s : seconds.split(",")) {
            if (!s.isBlank()) {
                out.add(Duration.ofMillis(Math.round(Double.parseDouble(s.trim()) * 1000)));
            }
        }
        return List.copyOf(out);
    }

    static List<Long> failureOffsets(Random random) {
        List<Long> offsets = new ArrayList<>();
        long earliest = FIRST_FAILURE_MILLIS;
        long latest = SCHEDULE.millis() - 10_000;
        for (int i = 0; i < FAILURES_PER_RUN; i++) {
            long room = latest - earliest - (FAILURES_PER_RUN - 1 - i) * MIN_GAP_MILLIS;
            long at = earliest + (room > 0 ? (long) (random.nextDouble() * Math.min(room, MIN_GAP_MILLIS)) : 0);
            offsets.add(at);
            earliest = at + MIN_GAP_MILLIS;
        }
        return offsets;
    }

    private Run runOnce(Setup setup, int round, List<Long> failureOffsets) throws Exception {
        Path runDir = Files.createTempDirectory(tmp, "p");
        String runId = "pacing-" + round + "-" + runDir.getFileName();
        say("--- %s, round %d, failures at %s ms", setup.label(), round, failureOffsets);
        Configuration config = FlinkSettings.sr3(FlinkSettings.common(setup.paced() ? SAFETY_INTERVAL
                : setup.fixedInterval()), "bench/" + runDir.getFileName(), 2);
        config.setString("rest.bind-port", "0");
        config.setString("metrics.fetcher.update-interval", "200 ms");
        config.setString("rest.cache.checkpoint-statistics.timeout", "200 ms");
        config.setString("web.refresh-interval", "200 ms");
        // Full snapshots: every checkpoint serializes and ships the whole state, so it costs CPU
        // that the keyed operator (CPU-bound work) needs during a burst.
        config.setString("execution.checkpointing.incremental", "false");
        config.setString("sr3.working-state", "heap");
        TestingRing ring = TestingRing.start(config, 3, runDir.resolve("r"));
        TestJobSpec spec = BurstyTestJob.spec(runId, SCHEDULE).withKeys(KEYS).withPayload(PAYLOAD_BYTES, PAYLOAD_SLOTS);
        try (EmbeddedCluster cluster = EmbeddedCluster.start(config, 2, 1, runDir.resolve("f"))) {
            Configuration job = new Configuration(config);
            if (setup.paced()) {
                job.setString("sr3.pacing.enabled", "true");
                job.setString("sr3.pacing.max-recovery-time", BOUND.toMillis() + " ms");
                job.setString("sr3.pacing.failure-detection-time", FAILURE_DETECTION.toMillis() + " ms");
                job.setString("sr3.pacing.mtbf", MTBF.toSeconds() + " s");
                job.setString("sr3.pacing.rest-url",
                        cluster.miniCluster().getRestAddress().get(30, TimeUnit.SECONDS).toString());
            }
            StreamExecutionEnvironment env = new StreamExecutionEnvironment(job);
            env.setParallelism(KEYED_PARALLELISM);
            BurstyTestJob.addToEnvironment(env, spec, SCHEDULE, WORK, CAUGHT_UP_MILLIS);
            JobID jobId = cluster.submit(env.getStreamGraph().getJobGraph());
            JobProbe probe = new JobProbe(cluster, jobId);
            BurstyRuns.Run bursty = BurstyRuns.run(runId);
            CheckpointPacerMXBean[] pacer = new CheckpointPacerMXBean[1];
            List<Long> predicted = new ArrayList<>();
            // From each failure to the moment the restarted source was back on schedule.
            List<long[]> sourceRecoveries = new ArrayList<>();
            for (long offset : failureOffsets) {
                probe.await("failure moment " + offset + " ms", Duration.ofMinutes(3), Duration.ofMillis(10), g -> {
                    if (pacer[0] == null) {
                        pacer[0] = CheckpointPacers.running(jobId.toString()).orElse(null);
                    }
                    long origin = bursty.originIfStarted();
                    return origin > 0 && System.currentTimeMillis() - origin >= offset && JobProbe.allRunning(g);
                });
                int before = bursty.failures().size();
                // The pacer's model, for the state's age at this moment (-1: none, or unbounded).
                predicted.add(pacer[0] == null ? -1 : pacer[0].getEstimatedRecoveryTimeMillis());
                bursty.armFailure();
                probe.await("the injected failure", Duration.ofMinutes(1), Duration.ofMillis(10),
                        g -> bursty.failures().size() > before);
                long failure = bursty.failures().get(before);
                probe.await("catch-up after the failure at " + offset + " ms", Duration.ofMinutes(2),
                        Duration.ofMillis(20), g -> bursty.sourceCaughtUpAfter(failure) > 0
                                || g.getState().isGloballyTerminalState());
                long caughtUp = bursty.sourceCaughtUpAfter(failure);
                if (caughtUp == 0) {
                    // The input ended before the restarted job caught up: the bound is missed, and
                    // the remaining failures cannot be injected.
                    sourceRecoveries.add(new long[] {failure, Long.MAX_VALUE});
                    say("%s: no catch-up after the failure at %d ms before the input ended", setup.label(), offset);
                    break;
                }
                // Taken now: later failures start later attempts, which must not count for this one.
                sourceRecoveries.add(new long[] {failure, caughtUp});
            }
            JobResult result = cluster.awaitResult(jobId, Duration.ofMinutes(4));
            ProcessingLog log = bursty.processing();
            List<Long> recoveries = new ArrayList<>();
            List<long[]> recoveryWindows = new ArrayList<>();
            for (int i = 0; i < sourceRecoveries.size(); i++) {
                long failure = sourceRecoveries.get(i)[0];
                long sourceCaughtUp = sourceRecoveries.get(i)[1];
                long nextFailure = i + 1 < sourceRecoveries.size() ? sourceRecoveries.get(i + 1)[0] : Long.MAX_VALUE;
                long caughtUp = sourceCaughtUp == Long.MAX_VALUE ? Long.MAX_VALUE
                        : log.outputCaughtUp(failure, sourceCaughtUp, nextFailure);
                recoveries.add(caughtUp == Long.MAX_VALUE ? NOT_CAUGHT_UP : caughtUp - failure);
                recoveryWindows.add(new long[] {failure, caughtUp});
            }
            boolean exact = result.isSuccess() && TestJobs.verify(spec).exact();
            long checkpoints = JobProbe.completedCheckpoints(probe.graph());
            List<JobProbe.CheckpointRecord> completed = JobProbe.completed(probe.graph());
            long inBursts = completed.stream().filter(c -> inBurst(c.triggerTimestamp() - bursty.originMillis())).count();
            long meanMillis = Math.round(completed.stream().mapToLong(JobProbe.CheckpointRecord::endToEndMillis)
                    .average().orElse(0));
            long maxState = completed.stream().mapToLong(JobProbe.CheckpointRecord::stateSize).max().orElse(0);
            Map<String, Long> triggers = new LinkedHashMap<>();
            if (pacer[0] != null) {
                triggers.put("ageBound", pacer[0].getTriggersAgeBound());
                triggers.put("cheapestMoment", pacer[0].getTriggersCheapestMoment());
                triggers.put("steadyInterval", pacer[0].getTriggersSteadyInterval());
            }
            ProcessingLog measured = log.dueFrom(bursty.originMillis() + WARM_UP_MILLIS);
            LatencyHistogram firstProcessing = measured.firstProcessing();
            return new Run(setup.label(), round, failureOffsets, recoveries, predicted, firstProcessing.quantile(0.99),
                    log.firstProcessing().quantile(0.99), measured.all().quantile(0.99),
                    measured.outside(recoveryWindows).quantile(0.99),
                    measured.dueWithin(phases(bursty.originMillis(), true), recoveryWindows).quantile(0.99),
                    measured.dueWithin(phases(bursty.originMillis(), false), recoveryWindows).quantile(0.99),
                    firstProcessing.quantile(0.5),
                    bursty.latencies().count(), checkpoints, inBursts, meanMillis, maxState, exact, triggers);
        } finally {
            RunRegistry.remove(runId);
            BurstyRuns.remove(runId);
            ring.close();
            deleteQuietly(runDir);
        }
    }

    /** [start, end) epoch millis of the burst phases, or of all the others. */
    static List<long[]> phases(long origin, boolean bursts) {
        List<long[]> out = new ArrayList<>();
        List<long[]> bounds = SCHEDULE.phaseBounds();
        for (int i = 0; i < bounds.size(); i++) {
            if (SCHEDULE.phases().get(i).name().equals("burst") == bursts) {
                out.add(new long[] {origin + bounds.get(i)[0], origin + bounds.get(i)[1]});
            }
        }
        return out;
    }

    /** Whether {@code offsetMillis} after the origin falls into a burst phase of the schedule. */
    static boolean inBurst(long offsetMillis) {
        Phase phase = SCHEDULE.phaseAt(offsetMillis);
        return phase != null && phase.name().equals("burst");
    }

    /**
     * The {@code -D} options of this run that differ from the pom's defaults (the pom passes them
     * all), so that a result file names its command.
     */
    private static String nonDefaultProperties() {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("sr3.bench.rounds", "3");
        defaults.put("sr3.bench.fixed", "1,3,6");
        defaults.put("sr3.bench.failures", "");
        defaults.put("sr3.bench.burst-rate", "2000");
        StringBuilder out = new StringBuilder();
        defaults.forEach((key, value) -> {
            String actual = System.getProperty(key, value);
            boolean same = actual.equals(value)
                    || (key.equals("sr3.bench.burst-rate") && Double.parseDouble(actual) == DEFAULT_BURST_RATE);
            if (!same) {
                out.append(" -D").append(key).append('=').append(actual);
            }
        });
        return out.toString();
    }

    private void say(String format, Object... args) {
        System.out.printf("[%6.1f s] %s%n", (System.currentTimeMillis() - start) / 1000.0, String.format(format, args));
    }

    private static void deleteQuietly(Path dir) {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (Exception ignored) {
            // best effort: target/ is cleaned by mvn clean anyway
        }
    }
}
