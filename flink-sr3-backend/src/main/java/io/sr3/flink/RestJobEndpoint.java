package io.sr3.flink;

import io.sr3.flink.pacing.CheckpointSample;
import io.sr3.flink.pacing.JobCounters;
import io.sr3.flink.pacing.JobEndpoint;
import io.sr3.flink.pacing.JobView;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A job seen through Flink's REST API (the JobManager's own, in the JobManager process):
 * <pre>
 *   GET  /jobs/:job                      state, vertices and their parallelism
 *   GET  /jobs/:job/plan                 (once) which vertices have no inputs: the sources
 *   GET  /jobs/:job/metrics              ?get=numRestarts: the scheduler's count of restarts
 *   GET  /jobs/:job/vertices/:v/metrics  ?get=0.numRecordsOut,0.accumulateBusyTimeMs,... per subtask
 *   GET  /jobs/:job/checkpoints          counts, history (trigger time, duration, state size)
 *   GET  /jobs/:job/checkpoints/details/:id   state size and parallelism per task (once per checkpoint)
 *   POST /jobs/:job/checkpoints          {"checkpointType":"CONFIGURED"} -> request-id
 *   GET  /jobs/:job/checkpoints/:request-id   until it is no longer IN_PROGRESS
 * </pre>
 * The last call matters: the JobManager keeps every asynchronous operation's result until it is
 * read, and on shutdown waits for unread ones. Values are as fresh as
 * {@code metrics.fetcher.update-interval} allows. Every request has a deadline.
 */
@NotThreadSafe
public final class RestJobEndpoint implements JobEndpoint {

    static final List<String> COUNTERS = List.of("numRecordsOut", "accumulateBusyTimeMs",
            "accumulateBackPressuredTimeMs", "accumulateIdleTimeMs");
    static final String RESTARTS = "numRestarts";
    private static final Set<String> TERMINAL = Set.of("FINISHED", "CANCELED", "FAILED");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final String jobId;
    private final Duration timeout;
    private final HttpClient http;
    private final List<String> unreadTriggers = new ArrayList<>();
    /** When a trigger request of ours last failed: no checkpoint of it appears in the history. */
    @Nullable private Instant triggerFailedAt;
    @Nullable private Set<String> sourceVertices;
    /** The checkpoint whose largest subtask share was last read, and that share. */
    private long shareOf = -1;
    private long share;

    public RestJobEndpoint(URI restBase, String jobId, Duration timeout) {
        this.base = URI.create(restBase.toString().replaceAll("/+$", "") + "/");
        this.jobId = jobId;
        this.timeout = timeout;
        // HTTP/1.1: Flink's REST server does not speak HTTP/2, and the h2c upgrade attempt costs a round trip.
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
    }

    @Override
    public JobView poll() throws IOException {
        readTriggerResults();
        JsonNode job = get("jobs/" + jobId);
        String state = job.path("state").asText("UNKNOWN");
        if (TERMINAL.contains(state)) {
            return new JobView(state, true, null, List.of(), 0, null);
        }
        JobCounters counters = "RUNNING".equals(state) ? counters(job) : null;
        long restarts = restartCount();
        JsonNode checkpoints = get("jobs/" + jobId + "/checkpoints");
        int inProgress = checkpoints.path("counts").path("in_progress").asInt(0);
        List<CheckpointSample> completed = new ArrayList<>();
        Instant latestFailed = triggerFailedAt;
        for (JsonNode c : checkpoints.path("history")) {
            if (c.path("is_savepoint").asBoolean(false)) {
                continue;
            }
            String status = c.path("status").asText();
            Instant triggered = Instant.ofEpochMilli(c.path("trigger_timestamp").asLong());
            if ("COMPLETED".equals(status)) {
                completed.add(new CheckpointSample(c.path("id").asLong(), triggered,
                        Duration.ofMillis(Math.max(0, c.path("end_to_end_duration").asLong())),
                        Math.max(0, c.path("state_size").asLong())));
            } else if ("FAILED".equals(status) && (latestFailed == null || triggered.isAfter(latestFailed))) {
                latestFailed = triggered;
            }
        }
        completed.sort(Comparator.comparingLong(CheckpointSample::id));
        if (!completed.isEmpty()) {
            CheckpointSample latest = completed.remove(completed.size() - 1);
            completed.add(new CheckpointSample(latest.id(), latest.triggered(), latest.duration(),
                    latest.stateSizeBytes(), largestShare(latest)));
        }
        return new JobView(state, false, counters, completed, inProgress, latestFailed, restarts);
    }

    /**
     * The scheduler's count of the job's restarts, region failovers included ({@code numRestarts}),
     * or {@link JobView#UNKNOWN_RESTARTS} before the metric store has it. Read after the counters:
     * Flink counts a restart before it deploys the new attempt.
     */
    private long restartCount() throws IOException {
        Double restarts = value(get("jobs/" + jobId + "/metrics?get=" + RESTARTS), RESTARTS);
        return restarts == null || restarts < 0 ? JobView.UNKNOWN_RESTARTS : restarts.longValue();
    }

    /** The largest share of {@code checkpoint} one subtask restores (details read once per checkpoint), else its size. */
    private long largestShare(CheckpointSample checkpoint) {
        if (checkpoint.id() != shareOf) {
            try {
                share = largestShare(get("jobs/" + jobId + "/checkpoints/details/" + checkpoint.id()),
                        checkpoint.stateSizeBytes());
            } catch (IOException e) {
                share = checkpoint.stateSizeBytes();
            }
            shareOf = checkpoint.id();
        }
        return share;
    }

    /** From {@code GET /jobs/:job/checkpoints/details/:id}: the largest {@code state_size / num_subtasks}, else {@code whole}. */
    static long largestShare(JsonNode details, long whole) {
        long largest = -1;
        for (JsonNode task : details.path("tasks")) {
            int subtasks = Math.max(1, task.path("num_subtasks").asInt(1));
            largest = Math.max(largest, (long) Math.ceil(Math.max(0, task.path("state_size").asLong()) / (double) subtasks));
        }
        return largest < 0 ? whole : largest;
    }

    private JobCounters counters(JsonNode job) throws IOException {
        if (sourceVertices == null) {
            Set<String> sources = new HashSet<>();
            for (JsonNode node : get("jobs/" + jobId + "/plan").path("plan").path("nodes")) {
                if (!node.has("inputs") || node.path("inputs").isEmpty()) {
                    sources.add(node.path("id").asText());
                }
            }
            sourceVertices = sources;
        }
        List<JobCounters.Vertex> vertices = new ArrayList<>();
        for (JsonNode v : job.path("vertices")) {
            String id = v.path("id").asText();
            int parallelism = v.path("parallelism").asInt();
            StringBuilder names = new StringBuilder();
            for (int i = 0; i < parallelism; i++) {
                for (String counter : COUNTERS) {
                    names.append(names.length() == 0 ? "" : ",").append(i).append('.').append(counter);
                }
            }
            JsonNode values = get("jobs/" + jobId + "/vertices/" + id + "/metrics?get=" + names);
            List<JobCounters.Subtask> subtasks = new ArrayList<>();
            for (int i = 0; i < parallelism; i++) {
                Double records = value(values, i + ".numRecordsOut");
                Double busy = value(values, i + ".accumulateBusyTimeMs");
                Double backPressured = value(values, i + ".accumulateBackPressuredTimeMs");
                Double idle = value(values, i + ".accumulateIdleTimeMs");
                if (records != null && busy != null && backPressured != null && idle != null) {
                    subtasks.add(new JobCounters.Subtask(i, records.longValue(), busy, backPressured, idle));
                }
            }
            vertices.add(new JobCounters.Vertex(id, v.path("name").asText(id), sourceVertices.contains(id), parallelism,
                    subtasks));
        }
        return new JobCounters(vertices);
    }

    @Nullable
    private static Double value(JsonNode metrics, String name) {
        for (JsonNode m : metrics) {
            if (name.equals(m.path("id").asText())) {
                try {
                    double d = Double.parseDouble(m.path("value").asText());
                    return Double.isNaN(d) ? null : d;
                } catch (NumberFormatException e) {
                    return null;
                }
            }
        }
        return null;
    }

    @Override
    public void triggerCheckpoint() throws IOException {
        HttpRequest request = HttpRequest.newBuilder(base.resolve("jobs/" + jobId + "/checkpoints"))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"checkpointType\":\"CONFIGURED\"}"))
                .build();
        String requestId = JSON.readTree(send(request)).path("request-id").asText("");
        if (!requestId.isEmpty()) {
            unreadTriggers.add(requestId);
        }
    }

    /** Reads the result of every trigger request that has one, so the JobManager can forget it. */
    private void readTriggerResults() throws IOException {
        for (int i = unreadTriggers.size() - 1; i >= 0; i--) {
            try {
                JsonNode status = get("jobs/" + jobId + "/checkpoints/" + unreadTriggers.get(i));
                if (!"IN_PROGRESS".equals(status.path("status").path("id").asText())) {
                    unreadTriggers.remove(i);
                    if (failed(status)) {
                        triggerFailedAt = Instant.now();
                    }
                }
            } catch (RestStatusException | JobEndpoint.UnknownJobException e) {
                // Unknown to the JobManager (expired, or the job is gone): nothing left to read.
                unreadTriggers.remove(i);
            }
        }
    }

    /** Whether a finished trigger request failed: its {@code operation} has a {@code failureCause}, not a checkpoint id. */
    static boolean failed(JsonNode triggerStatus) {
        JsonNode cause = triggerStatus.path("operation").path("failureCause");
        return "COMPLETED".equals(triggerStatus.path("status").path("id").asText())
                && !cause.isMissingNode() && !cause.isNull();
    }

    @Override
    public String describe() {
        return base.toString();
    }

    /** GET of a path under the REST base, as JSON; a 404 is an {@link JobEndpoint.UnknownJobException}. */
    JsonNode get(String path) throws IOException {
        return JSON.readTree(send(HttpRequest.newBuilder(base.resolve(path)).timeout(timeout).GET().build()));
    }

    private String send(HttpRequest request) throws IOException {
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while calling " + request.uri(), e);
        }
        if (response.statusCode() / 100 != 2) {
            String message = request.method() + " " + request.uri() + " answered HTTP " + response.statusCode() + ": "
                    + (response.body().length() > 300 ? response.body().substring(0, 300) + "..." : response.body());
            throw response.statusCode() == 404 ? new JobEndpoint.UnknownJobException(message)
                    : new RestStatusException(message);
        }
        return response.body();
    }

    /** Flink's REST API answered with an error status other than 404. */
    static final class RestStatusException extends IOException {
        private static final long serialVersionUID = 1L;

        RestStatusException(String message) {
            super(message);
        }
    }
}
