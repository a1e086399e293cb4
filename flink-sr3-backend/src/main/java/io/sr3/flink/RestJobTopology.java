package io.sr3.flink;

import io.sr3.flink.replication.FailoverRegions;
import io.sr3.flink.replication.OperatorProfile;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import javax.annotation.Nullable;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the replication planner reads about a running job from Flink's REST API: each stateful
 * vertex's state size, input rate, capacity and failover region, and the checkpoint interval.
 *
 * <pre>
 *   GET /jobs/:job                                  state, vertices (id, name, parallelism)
 *   GET /jobs/:job/plan                             edges and their ship strategy (pointwise or all-to-all)
 *   GET /jobs/:job/checkpoints                      the latest completed checkpoint
 *   GET /jobs/:job/checkpoints/details/:id          state size per vertex
 *   GET /jobs/:job/checkpoints/config               the checkpoint interval
 *   GET /jobs/:job/vertices/:v/subtasks/metrics     ?get=numRecordsInPerSecond,numRecordsOutPerSecond,busyTimeMsPerSecond&amp;agg=sum
 * </pre>
 */
final class RestJobTopology {

    /** Ship strategies that connect a subtask to a few subtasks of the next vertex, not to all. */
    private static final Set<String> POINTWISE = Set.of("FORWARD", "RESCALE");

    /** One reading: the job's stateful vertices and its checkpoint interval. */
    record Reading(List<OperatorProfile> operators, Duration checkpointInterval) {}

    private final RestJobEndpoint rest;
    private final String jobId;

    RestJobTopology(RestJobEndpoint rest, String jobId) {
        this.rest = rest;
        this.jobId = jobId;
    }

    /** The job's state name ({@code RUNNING}, {@code FINISHED}, ...). */
    String state() throws IOException {
        return rest.get("jobs/" + jobId).path("state").asText("UNKNOWN");
    }

    /**
     * The job as the model sees it, or null while it has no completed checkpoint (nothing says
     * yet which vertices hold state, or how much).
     */
    @Nullable
    Reading read() throws IOException {
        JsonNode latest = rest.get("jobs/" + jobId + "/checkpoints").path("latest").path("completed");
        if (latest.isMissingNode() || latest.isNull() || !latest.has("id")) {
            return null;
        }
        JsonNode tasks = rest.get("jobs/" + jobId + "/checkpoints/details/" + latest.path("id").asLong()).path("tasks");
        Duration interval = Duration.ofMillis(Math.max(0, rest.get("jobs/" + jobId + "/checkpoints/config")
                .path("interval").asLong(0)));

        List<FailoverRegions.Vertex> vertices = new ArrayList<>();
        List<FailoverRegions.Edge> edges = new ArrayList<>();
        Set<String> sources = new java.util.HashSet<>();
        for (JsonNode node : rest.get("jobs/" + jobId + "/plan").path("plan").path("nodes")) {
            String id = node.path("id").asText();
            vertices.add(new FailoverRegions.Vertex(id, Math.max(1, node.path("parallelism").asInt(1))));
            if (!node.has("inputs") || node.path("inputs").isEmpty()) {
                sources.add(id);
            }
            for (JsonNode input : node.path("inputs")) {
                edges.add(new FailoverRegions.Edge(input.path("id").asText(), id,
                        POINTWISE.contains(input.path("ship_strategy").asText("").toUpperCase(java.util.Locale.ROOT))));
            }
        }
        Map<String, Integer> regions = FailoverRegions.largestRegionSubtasks(vertices, edges);

        List<OperatorProfile> operators = new ArrayList<>();
        for (JsonNode vertex : rest.get("jobs/" + jobId).path("vertices")) {
            String id = vertex.path("id").asText();
            long stateBytes = Math.max(0, tasks.path(id).path("state_size").asLong(0));
            if (stateBytes == 0) {
                continue;
            }
            int parallelism = Math.max(1, vertex.path("parallelism").asInt(1));
            JsonNode metrics = rest.get("jobs/" + jobId + "/vertices/" + id
                    + "/subtasks/metrics?get=numRecordsInPerSecond,numRecordsOutPerSecond,busyTimeMsPerSecond&agg=sum");
            double input = sum(metrics, sources.contains(id) ? "numRecordsOutPerSecond" : "numRecordsInPerSecond");
            double busy = sum(metrics, "busyTimeMsPerSecond") / 1000.0 / parallelism;
            double capacity = busy > 0.001 ? input / busy : Double.POSITIVE_INFINITY;
            operators.add(new OperatorProfile(id, vertex.path("name").asText(id), parallelism, stateBytes, input,
                    Math.max(capacity, input), regions.getOrDefault(id, parallelism)));
        }
        return new Reading(operators, interval);
    }

    /** The {@code sum} of one aggregated metric, 0 when Flink has not reported it yet. */
    private static double sum(JsonNode metrics, String name) {
        for (JsonNode metric : metrics) {
            if (name.equals(metric.path("id").asText())) {
                double value = metric.path("sum").asDouble(0);
                return Double.isFinite(value) && value > 0 ? value : 0;
            }
        }
        return 0;
    }
}
