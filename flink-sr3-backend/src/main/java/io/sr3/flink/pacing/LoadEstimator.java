package io.sr3.flink.pacing;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns two {@link JobCounters} samples into the load the policy needs: the input rate (records
 * out of the source vertices per second), the busy and back-pressure ratio of every subtask, and
 * the capacity derived from busy time. Pure.
 *
 * <p>Capacity: a subtask that is busy a fraction {@code b} of the time at input rate
 * {@code lambda} saturates at about {@code lambda / b}, so the job's capacity is
 * {@code lambda / max(b)} over all subtasks (the hottest one saturates first). Busy fractions below
 * {@value #MIN_BUSY} are raised to it, so an idle job's capacity stays finite.
 *
 * <p>Rates are taken over each subtask's own accumulated busy + back-pressured + idle time, which
 * is the time between the two moments its metrics were sampled on the TaskManager: no clock skew
 * and no error from when the JobManager happened to fetch them.
 */
final class LoadEstimator {

    static final double MIN_BUSY = 0.02;

    private LoadEstimator() {}

    /** The outcome of one comparison: a load, or why there is none. */
    public sealed interface Result permits Load, NoNewSample, Missing, Reset {}

    /** Fresh rates and ratios. */
    public record Load(double inputRate, double capacity, List<SubtaskLoad> subtasks) implements Result {}

    /** Flink's metric store has not refreshed since the previous sample. */
    public record NoNewSample() implements Result {}

    /** A vertex or subtask did not report (the pacer must fall back). */
    public record Missing(String what) implements Result {}

    /** Counters went backwards (a restart): start over from this sample. */
    public record Reset(String what) implements Result {}

    public static Result estimate(@Nullable JobCounters previous, JobCounters current) {
        for (JobCounters.Vertex v : current.vertices()) {
            if (v.subtasks().size() < v.parallelism()) {
                return new Missing(String.format("%d of %d subtasks of '%s' report no metrics", v.parallelism()
                        - v.subtasks().size(), v.parallelism(), v.name()));
            }
        }
        if (previous == null) {
            return new Reset("first sample");
        }
        Map<String, JobCounters.Vertex> before = new HashMap<>();
        for (JobCounters.Vertex v : previous.vertices()) {
            before.put(v.id(), v);
        }
        double inputRate = 0;
        double hottestBusy = 0;
        boolean anyNew = false;
        List<SubtaskLoad> loads = new ArrayList<>();
        for (JobCounters.Vertex v : current.vertices()) {
            JobCounters.Vertex old = before.get(v.id());
            if (old == null) {
                return new Reset("vertex '" + v.name() + "' is new");
            }
            Map<Integer, JobCounters.Subtask> oldSubtasks = new HashMap<>();
            for (JobCounters.Subtask s : old.subtasks()) {
                oldSubtasks.put(s.index(), s);
            }
            for (JobCounters.Subtask s : v.subtasks()) {
                JobCounters.Subtask o = oldSubtasks.get(s.index());
                if (o == null) {
                    return new Reset("subtask " + s.index() + " of '" + v.name() + "' is new");
                }
                double elapsed = s.elapsedMs() - o.elapsedMs();
                long records = s.recordsOut() - o.recordsOut();
                if (elapsed < 0 || records < 0) {
                    return new Reset("counters of subtask " + s.index() + " of '" + v.name() + "' went back (restart)");
                }
                if (elapsed == 0) {
                    continue;
                }
                anyNew = true;
                double busy = clamp((s.busyMs() - o.busyMs()) / elapsed);
                double backPressure = clamp((s.backPressuredMs() - o.backPressuredMs()) / elapsed);
                loads.add(new SubtaskLoad(v.name(), s.index(), busy, backPressure));
                hottestBusy = Math.max(hottestBusy, busy);
                if (v.source()) {
                    inputRate += records * 1000.0 / elapsed;
                }
            }
        }
        if (!anyNew) {
            return new NoNewSample();
        }
        double capacity = inputRate > 0 ? inputRate / Math.max(MIN_BUSY, hottestBusy) : Double.MAX_VALUE;
        return new Load(inputRate, capacity, loads);
    }

    private static double clamp(double ratio) {
        return Double.isNaN(ratio) ? 0 : Math.max(0, Math.min(1, ratio));
    }
}
