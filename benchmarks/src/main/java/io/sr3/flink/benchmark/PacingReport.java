package io.sr3.flink.benchmark;

import io.sr3.flink.benchmark.PacingBenchmark.Run;
import io.sr3.flink.benchmark.PacingBenchmark.Setup;
import io.sr3.flink.harness.MachineDescription;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.sr3.flink.benchmark.PacingBenchmark.*;

/**
 * The pacing benchmark's verdicts and report: whether each setup held the recovery bound, its
 * p99s, the ratios against the fixed intervals, the Markdown result file and the parameters its
 * JSON records.
 */
final class PacingReport {

    private PacingReport() {}

    /** Every run as the JSON file records it. */
    static List<Map<String, Object>> runsJson(List<Run> runs) {
        List<Map<String, Object>> runMaps = new ArrayList<>();
        for (Run r : runs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("setup", r.setup());
            m.put("round", r.round());
            m.put("failureOffsetsMillis", r.failureOffsets());
            m.put("recoveryMillis", r.recoveries());
            m.put("pacerPredictedRecoveryMillis", r.predicted());
            m.put("p50Millis", r.p50());
            m.put("p99Millis", r.p99First());
            m.put("p99WithWarmUpMillis", r.p99FirstWithWarmUp());
            m.put("p99EveryProcessingMillis", r.p99());
            m.put("p99OutsideRecoveryMillis", r.p99Steady());
            m.put("p99OutsideRecoveryBurstsMillis", r.p99Bursts());
            m.put("p99OutsideRecoveryQuietMillis", r.p99Quiet());
            m.put("recordsProcessed", r.records());
            m.put("completedCheckpoints", r.checkpoints());
            m.put("checkpointsTriggeredInBursts", r.checkpointsInBursts());
            m.put("meanCheckpointMillis", r.meanCheckpointMillis());
            m.put("maxCheckpointStateBytes", r.maxStateBytes());
            m.put("pacerTriggers", r.pacerTriggers());
            m.put("exact", r.exact());
            runMaps.add(m);
        }
        return runMaps;
    }

    static String summary(List<Setup> setups, List<Run> runs) {
        StringBuilder out = new StringBuilder();
        out.append("| Setup | failures | bound held | never caught up | recovery max | recovery mean | p99 "
                + "| p99 every processing | p99 outside recovery | p99 with warm-up | p50 | checkpoints/run | exact |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        Map<String, Verdict> verdicts = new LinkedHashMap<>();
        for (Setup s : setups) {
            List<Long> rec = new ArrayList<>();
            long p99First = 0;
            long p99WithWarmUp = 0;
            long p99 = 0;
            long p99s = 0;
            long p50 = 0;
            long ckpts = 0;
            int n = 0;
            int injected = 0;
            boolean exact = true;
            for (Run r : runs) {
                if (r.setup().equals(s.label())) {
                    rec.addAll(r.recoveries());
                    injected += r.failureOffsets().size();
                    p99First = Math.max(p99First, r.p99First());
                    p99WithWarmUp = Math.max(p99WithWarmUp, r.p99FirstWithWarmUp());
                    p99 = Math.max(p99, r.p99());
                    p99s = Math.max(p99s, r.p99Steady());
                    p50 = Math.max(p50, r.p50());
                    ckpts += r.checkpoints();
                    n++;
                    exact &= r.exact();
                }
            }
            long held = rec.stream().filter(x -> x >= 0 && x <= BOUND.toMillis()).count();
            long never = rec.stream().filter(x -> x == NOT_CAUGHT_UP).count();
            long max = rec.stream().mapToLong(Long::longValue).filter(x -> x >= 0).max().orElse(-1);
            double mean = rec.stream().mapToLong(Long::longValue).filter(x -> x >= 0).average().orElse(-1);
            verdicts.put(s.label(), new Verdict(held == rec.size() && rec.size() == injected,
                    p99First, p99, p99s, p99WithWarmUp));
            out.append(String.format(Locale.ROOT, "| %s | %d | %d/%d | %d | %,d ms | %,.0f ms | %,d ms | %,d ms | %,d ms "
                            + "| %,d ms | %,d ms | %.1f | %s |%n", s.label(), rec.size(), held, rec.size(), never, max, mean,
                    p99First, p99, p99s, p99WithWarmUp, p50, n == 0 ? 0 : (double) ckpts / n, exact ? "yes" : "NO"));
        }
        out.append("\np99 = end-to-end latency of each record at its first processing (what a consumer of the "
                + "job's output sees; a replay repeats results already out), the highest p99 over the rounds of a "
                + "setup; \"every processing\" counts replayed records again; \"outside recovery\" leaves out the "
                + "records processed between a failure and its catch-up; all three leave out the records due in the first load "
                + "cycle (" + WARM_UP_MILLIS / 1000 + " s, the warm-up), \"with warm-up\" is the p99 with them. Bound = ")
                .append(BOUND.toSeconds())
                .append(" s (sr3.pacing.max-recovery-time of the pacer; the fixed intervals are judged against it too). "
                        + "A setup holds the bound when every injected failure was caught up within it; after a "
                        + "failure that is never caught up, the run's remaining failures are not injected.\n");
        String shortest = null;
        String lowest = null;
        for (Setup s : setups.stream().filter(s -> !s.paced()).toList()) { // fixed intervals, shortest first
            Verdict v = verdicts.get(s.label());
            if (v.heldBound() && shortest == null) {
                shortest = s.label();
            }
            if (v.heldBound() && (lowest == null || v.p99() < verdicts.get(lowest).p99())) {
                lowest = s.label();
            }
        }
        for (Setup s : setups.stream().filter(Setup::paced).toList()) {
            Verdict pacer = verdicts.get(s.label());
            out.append("\n").append(s.label()).append(" held the bound for 100% of its failures: ")
                    .append(pacer.heldBound() ? "yes" : "NO").append('\n');
            if (shortest == null) {
                out.append("No fixed interval held the bound for every failure, so there is no p99 ratio to report.\n");
                continue;
            }
            out.append(ratio("Shortest fixed interval that held the bound", shortest, pacer, verdicts.get(shortest)));
            if (!lowest.equals(shortest)) {
                out.append(ratio("Fixed interval with the lowest p99 among those that held the bound", lowest, pacer,
                        verdicts.get(lowest)));
            }
        }
        return out.toString();
    }

    /** One setup over all its rounds: whether it held the bound, and its highest p99 in each view (ms). */
    private record Verdict(boolean heldBound, long p99, long p99EveryProcessing, long p99OutsideRecovery,
            long p99WithWarmUp) {}

    private static String ratio(String what, String label, Verdict pacer, Verdict fixed) {
        return String.format(Locale.ROOT, "%s: %s. p99 ratio pacer / %s = %.2f (goal <= 0.7); every processing %.2f, "
                + "outside recovery %.2f, with warm-up %.2f.%n", what, label, label, (double) pacer.p99() / fixed.p99(),
                (double) pacer.p99EveryProcessing() / fixed.p99EveryProcessing(),
                (double) pacer.p99OutsideRecovery() / fixed.p99OutsideRecovery(),
                (double) pacer.p99WithWarmUp() / fixed.p99WithWarmUp());
    }

    static String markdown(MachineDescription machine, List<Setup> setups, List<Run> runs, String summary, String plot) {
        StringBuilder md = new StringBuilder();
        md.append("# Checkpoint pacer vs fixed intervals on a bursty job\n\n");
        md.append("Measured ").append(Instant.now()).append(" by `").append(PacingBenchmark.class.getName())
                .append("`; raw numbers in the JSON file of the same name.\n\nCommand (from the repository root, after "
                        + "`mvn -B -q install -DskipTests`):\n\n```\n").append(COMMAND).append("\n```\n\n## Machine\n\n");
        machine.toMap().forEach((k, v) -> md.append("- ").append(k).append(": `").append(v).append("`\n"));
        md.append("\nThe machine is shared with another engineer's builds and tests, so all numbers are noisy.\n\n## Setup\n\n");
        parameters().forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\n## Results\n\n").append(plot).append(summary).append("\n## Per run\n\n| Setup | Round | failures at (ms) | "
                + "recoveries (ms) | pacer's prediction (ms) | p50 | p99 | p99 every processing "
                + "| p99 outside recovery (bursts / quiet) | checkpoints (in bursts) | mean checkpoint | largest state "
                + "| p99 with warm-up | pacer triggers | exact |\n"
                + "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
        for (Run r : runs) {
            md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %d | %d | %d | %d (%d / %d) | %d (%d) | %d ms "
                            + "| %.1f MiB | %d | %s | %s |%n", r.setup(), r.round(), r.failureOffsets(), r.recoveries(),
                    r.setup().startsWith("pacer") ? r.predicted() : "-", r.p50(), r.p99First(), r.p99(),
                    r.p99Steady(), r.p99Bursts(), r.p99Quiet(),
                    r.checkpoints(), r.checkpointsInBursts(), r.meanCheckpointMillis(), r.maxStateBytes() / 1048576.0,
                    r.p99FirstWithWarmUp(), r.pacerTriggers().isEmpty() ? "-" : r.pacerTriggers(), r.exact() ? "yes" : "NO"));
        }
        md.append("\n## How the numbers are taken\n\n"
                + "- Recovery time: from the moment the failure injector throws to the moment the job's output caught "
                + "up: the restarted source emits a record at most " + CAUGHT_UP_MILLIS + " ms after it was due (the "
                + "replay backlog is read, as in the recovery-time model; taken before the next failure is injected), "
                + "and the keyed operator has processed every record due until then (the records the source emitted "
                + "late still wait in the job's buffers; their results are out only now). Before 2026-12-01 it ended "
                + "at the source, and the records still buffered then counted as outside the recovery.\n"
                + "- Latency numbers leave out the records due in the first load cycle (" + WARM_UP_MILLIS / 1000
                + " s: the warm-up, in which the pacer learns the load and no failure is injected), except \"p99 with "
                + "warm-up\" (each record once, all records).\n"
                + "- End-to-end latency: from a record's due time in the schedule (when it would have been appended to a "
                + "log) to the end of its processing in the keyed operator.\n"
                + "  - p99: each record once, at its first processing. That is when its result reaches a consumer of "
                + "the job's output (at-least-once delivery: a replay after a restart repeats a result that was already "
                + "out). Records due while the job was down count with the time they waited for the recovery.\n"
                + "  - p99 every processing: replayed records count again, with the latency of their repeated "
                + "processing (up to the checkpoint age at the failure plus the recovery). It was the benchmark's "
                + "headline number before 2026-11-30 evening.\n"
                + "  - p99 outside recovery: every processing, leaving out the records processed between a failure and "
                + "the moment its recovery ended (caught up): the latency of the running job, checkpoints included. "
                + "\"(bursts / quiet)\" splits it by the phase in which a record was due.\n"
                + "  - Transactional (exactly-once) sinks publish a record only when the next checkpoint completes; "
                + "this benchmark does not model that latency.\n"
                + "- Pacer's prediction: the recovery time its model estimated for the state's age at the moment the "
                + "failure was armed (its `estimatedRecoveryTimeMillis`; -1 while it had no estimate or the bound "
                + "was unreachable).\n"
                + "- The failure moments are drawn once per round (seeded) and used for every setup of that round.\n"
                + "- Checkpoint statistics come from Flink; pacer triggers from its MBean counters.\n");
        return md.toString();
    }

    static Map<String, Object> parameters() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("schedule", SCHEDULE.phases().toString());
        p.put("records", SCHEDULE.records());
        p.put("work", WORK.micros() + " us of " + WORK.kind() + " work per record in the keyed operator, "
                + KEYED_PARALLELISM + " keyed subtasks; " + (WORK.ballastBytesPerKey() >> 10)
                + " KiB of unchanging state written per key on its first record");
        p.put("state", KEYS + " keys x (" + PAYLOAD_SLOTS + " x " + PAYLOAD_BYTES + " B + " + (WORK.ballastBytesPerKey() >> 10)
                + " KiB), heap working state, full (non-incremental) checkpoints on a 3-node in-JVM ring, replication 2");
        p.put("cluster", "embedded MiniCluster, 2 TaskManagers x 1 slot, fresh cluster and ring per run");
        p.put("bound", BOUND.toMillis() + " ms");
        p.put("pacer", "sr3.pacing.max-recovery-time " + BOUND.toMillis() + " ms, failure-detection-time "
                + FAILURE_DETECTION.toMillis() + " ms, mtbf " + MTBF.toSeconds() + " s, Flink interval "
                + SAFETY_INTERVAL.toSeconds() + " s as safety maximum");
        p.put("fixedIntervals", FIXED.stream().map(d -> d.toSeconds() + " s").toList().toString()
                + " (3 s = Flink's typical 1 min at the 20x time scale of this run)");
        p.put("rounds", ROUNDS + ", after a JVM warm-up run of the last setup (round 0, not reported; the result files "
                + "of before commit da5bf9c had none)");
        p.put("failureMoments", CHOSEN_FAILURES.isEmpty() ? FAILURES_PER_RUN + " per run, random (seeded per round)"
                : "chosen: " + CHOSEN_FAILURES + " ms after the schedule's start");
        p.put("caughtUpMillis", CAUGHT_UP_MILLIS);
        p.put("warmUpMillis", WARM_UP_MILLIS
                + " (records due before it are left out of the latency numbers, except p99 with warm-up)");
        p.put("restartStrategy", "fixed-delay, 200 ms");
        return p;
    }

}
