package io.sr3.flink.replication;

import java.util.Objects;

/**
 * One stateful job vertex (operator chain) as the failure-cost model sees it.
 *
 * @param vertexId Flink's job vertex id
 * @param name the vertex's name, for log lines
 * @param parallelism its subtasks, at least 1
 * @param stateBytes its checkpointed state in the latest checkpoint, all subtasks together
 * @param inputRecordsPerSecond records/s arriving at all its subtasks together
 * @param capacityRecordsPerSecond records/s all its subtasks process when 100% busy; +Inf when unknown
 * @param failoverRegionSubtasks the subtasks Flink restarts together when one subtask of this vertex fails
 */
public record OperatorProfile(String vertexId, String name, int parallelism, long stateBytes,
        double inputRecordsPerSecond, double capacityRecordsPerSecond, int failoverRegionSubtasks) {

    public OperatorProfile {
        Objects.requireNonNull(vertexId, "vertexId");
        Objects.requireNonNull(name, "name");
        if (vertexId.isBlank()) {
            throw new IllegalArgumentException("vertexId must not be blank (vertex '" + name + "')");
        }
        String who = "Operator " + vertexId + " (" + name + "): ";
        check(parallelism >= 1, who, "parallelism must be >= 1, was %d", parallelism);
        check(stateBytes >= 0, who, "stateBytes must be >= 0, was %d", stateBytes);
        check(Double.isFinite(inputRecordsPerSecond) && inputRecordsPerSecond >= 0, who,
                "inputRecordsPerSecond must be finite and >= 0, was %s", inputRecordsPerSecond);
        check(capacityRecordsPerSecond >= 0, who, // false for NaN; +Inf passes
                "capacityRecordsPerSecond must be >= 0 (+Inf when unknown), was %s", capacityRecordsPerSecond);
        check(failoverRegionSubtasks >= 1, who, "failoverRegionSubtasks must be >= 1, was %d", failoverRegionSubtasks);
    }

    private static void check(boolean condition, String who, String template, Object value) {
        if (!condition) {
            throw new IllegalArgumentException(who + String.format(template, value));
        }
    }
}
