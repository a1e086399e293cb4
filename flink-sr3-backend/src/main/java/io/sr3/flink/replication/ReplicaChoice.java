package io.sr3.flink.replication;

import java.util.Objects;

/**
 * One operator's replication: how many copies its new checkpoint files get, over how many
 * distinct zones, and why.
 *
 * @param vertexId the job vertex the choice is for
 * @param name its name, for log lines
 * @param copies copies of each of its files, 1 to {@link ReplicationSettings#MOST_COPIES}
 * @param zones distinct zones the copies should span, 1 to {@code copies}
 * @param cost the failure cost the choice rests on
 * @param reason why, in a few words ("highest failure cost per byte; at max-copies")
 */
public record ReplicaChoice(String vertexId, String name, int copies, int zones, OperatorCost cost, String reason) {

    public ReplicaChoice {
        Objects.requireNonNull(vertexId, "vertexId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(cost, "cost");
        Objects.requireNonNull(reason, "reason");
        if (copies < 1 || copies > ReplicationSettings.MOST_COPIES) {
            throw new IllegalArgumentException(String.format("Operator %s (%s): copies must be between 1 and %d, was %d",
                    vertexId, name, ReplicationSettings.MOST_COPIES, copies));
        }
        if (zones < 1 || zones > copies) {
            throw new IllegalArgumentException(String.format(
                    "Operator %s (%s): zones must be between 1 and copies (%d), was %d", vertexId, name, copies, zones));
        }
        if (!vertexId.equals(cost.operator().vertexId())) {
            throw new IllegalArgumentException("Choice for vertex " + vertexId + " rests on the cost of vertex "
                    + cost.operator().vertexId());
        }
    }

    /** The operator's checkpointed state in the latest checkpoint, all subtasks. */
    public long stateBytes() {
        return cost.operator().stateBytes();
    }
}
