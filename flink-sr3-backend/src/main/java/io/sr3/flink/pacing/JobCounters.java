package io.sr3.flink.pacing;

import java.util.List;
import java.util.Objects;

/**
 * Cumulative per-subtask counters of one job as Flink's metric store last saw them; two of these
 * give rates ({@link LoadEstimator}).
 *
 * @param vertices every job vertex, in the job's order
 */
public record JobCounters(List<Vertex> vertices) {

    public JobCounters {
        vertices = List.copyOf(vertices);
    }

    /** Records out of the source vertices since their attempt started: the job's input so far. */
    public long sourceRecords() {
        return vertices.stream().filter(Vertex::source).flatMap(v -> v.subtasks().stream())
                .mapToLong(Subtask::recordsOut).sum();
    }

    /** The mean rate (records/s) at which the sources emitted since their attempt started, each over its own time. */
    public double sourceRateSinceStart() {
        return vertices.stream().filter(Vertex::source).flatMap(v -> v.subtasks().stream())
                .mapToDouble(s -> s.elapsedMs() > 0 ? s.recordsOut() * 1000.0 / s.elapsedMs() : 0).sum();
    }

    /** How long the longest-running subtask has been running in its attempt (ms), from its own time counters. */
    public double longestRunningMs() {
        return vertices.stream().flatMap(v -> v.subtasks().stream()).mapToDouble(Subtask::elapsedMs).max().orElse(0);
    }

    /**
     * One job vertex.
     *
     * @param id Flink's vertex id
     * @param name its name (for log lines)
     * @param source whether it has no inputs: its records out are the job's input
     * @param parallelism how many subtasks should report
     * @param subtasks the subtasks that did report
     */
    public record Vertex(String id, String name, boolean source, int parallelism, List<Subtask> subtasks) {

        public Vertex {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(name, "name");
            subtasks = List.copyOf(subtasks);
        }
    }

    /**
     * Task-level counters of one subtask ({@code numRecordsOut}, {@code accumulateBusyTimeMs},
     * {@code accumulateBackPressuredTimeMs}, {@code accumulateIdleTimeMs}); their time counters sum
     * to the task's running time at the moment they were sampled, which makes them their own clock.
     */
    public record Subtask(int index, long recordsOut, double busyMs, double backPressuredMs, double idleMs) {

        double elapsedMs() {
            return busyMs + backPressuredMs + idleMs;
        }
    }
}
