package io.sr3.flink.cluster;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.graph.ExecutionPlan;

import javax.annotation.Nullable;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ProcessCluster}'s JobManager over REST: jobs are submitted and cancelled with Flink's
 * {@link RestClusterClient} (a job graph built in this JVM, no job jar), job state and checkpoint
 * statistics are read as JSON. Reads answer null or a neutral value while the endpoint is not
 * reachable, so that polls go on.
 */
final class ClusterRestClient implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final long SUBMIT_TIMEOUT_SECONDS = 60;

    private final String baseUrl;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final RestClusterClient<StandaloneClusterId> client;

    ClusterRestClient(String host, int port) throws Exception {
        this.baseUrl = "http://" + host + ":" + port;
        Configuration config = new Configuration();
        config.set(JobManagerOptions.ADDRESS, host);
        config.set(RestOptions.ADDRESS, host);
        config.set(RestOptions.PORT, port);
        this.client = new RestClusterClient<>(config, StandaloneClusterId.getInstance());
    }

    JobID submit(ExecutionPlan plan) throws Exception {
        return client.submitJob(plan).get(SUBMIT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    void cancel(JobID job) throws Exception {
        client.cancel(job).get(SUBMIT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    /** The job's status as the REST API reports it ({@code RUNNING}, {@code FINISHED}, ...), or {@code UNKNOWN}. */
    String jobStatus(JobID job) {
        JsonNode json = getJson("/jobs/" + job);
        return json == null ? "UNKNOWN" : json.path("state").asText();
    }

    /** True when the job and every one of its tasks are RUNNING. */
    boolean allTasksRunning(JobID job) {
        JsonNode json = getJson("/jobs/" + job);
        if (json == null || !"RUNNING".equals(json.path("state").asText())) {
            return false;
        }
        for (JsonNode vertex : json.path("vertices")) {
            if (!"RUNNING".equals(vertex.path("status").asText())) {
                return false;
            }
        }
        return true;
    }

    /** {@code name=status} of each of the job's vertices. */
    String vertexStates(JobID job) {
        JsonNode json = getJson("/jobs/" + job);
        List<String> states = new ArrayList<>();
        if (json != null) {
            for (JsonNode vertex : json.path("vertices")) {
                states.add(vertex.path("name").asText() + "=" + vertex.path("status").asText());
            }
        }
        return states.toString();
    }

    /** Names ({@code taskmanager.resource-id}) of the TaskManagers that run tasks of the job. */
    List<String> taskManagersRunning(JobID job) {
        List<String> names = new ArrayList<>();
        JsonNode json = getJson("/jobs/" + job);
        if (json == null) {
            return names;
        }
        for (JsonNode vertex : json.path("vertices")) {
            JsonNode tms = getJson("/jobs/" + job + "/vertices/" + vertex.path("id").asText() + "/taskmanagers");
            if (tms != null) {
                for (JsonNode tm : tms.path("taskmanagers")) {
                    String id = tm.path("taskmanager-id").asText();
                    if (!id.isEmpty() && !names.contains(id)) {
                        names.add(id);
                    }
                }
            }
        }
        return names;
    }

    /** {@code /jobs/:id/checkpoints}, or an empty object while unreachable. */
    JsonNode checkpoints(JobID job) {
        JsonNode json = getJson("/jobs/" + job + "/checkpoints");
        return json == null ? JSON.createObjectNode() : json;
    }

    /** {@code /jobs/:id/exceptions} as text. */
    String exceptions(JobID job) {
        JsonNode json = getJson("/jobs/" + job + "/exceptions?maxExceptions=50");
        return json == null ? "" : json.toString();
    }

    /** TaskManagers registered with the JobManager; 0 while unreachable. */
    int registeredTaskManagers() {
        JsonNode json = getJson("/taskmanagers");
        return json == null ? 0 : json.path("taskmanagers").size();
    }

    /** GET on the REST API; null if the endpoint is not reachable or answers with an error. */
    @Nullable
    JsonNode getJson(String path) {
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(REQUEST_TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return response.statusCode() == 200 ? JSON.readTree(response.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while calling the REST API at " + baseUrl, e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
