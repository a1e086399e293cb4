package io.sr3.flink;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A stand-in for the JobManager's REST API on a real loopback HTTP server, answering in Flink
 * 2.3's shapes for job {@code job}: a source (2 subtasks) hashed into a keyed operator (2),
 * forwarded into a sink (2), and a separate pipeline of a source forwarded into a stateful
 * operator (2 each). Paths without an answer get 404, as Flink gives for unknown jobs.
 */
final class FakeJobRest implements AutoCloseable {

    static final String JOB = "job";

    final Map<String, String> answers = new ConcurrentHashMap<>();
    private final HttpServer server;

    FakeJobRest() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String body = answers.get(exchange.getRequestURI().getPath());
            byte[] bytes = (body == null ? "{\"errors\": [\"Not found\"]}" : body).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(body == null ? 404 : 200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        state("RUNNING");
        answers.put("/jobs/job/checkpoints", "{\"counts\": {\"completed\": 0}, \"latest\": {\"completed\": null}}");
        answers.put("/jobs/job/plan", """
                {"plan": {"nodes": [
                  {"id": "sink", "parallelism": 2, "inputs": [{"num": 0, "id": "keyed", "ship_strategy": "FORWARD"}]},
                  {"id": "keyed", "parallelism": 2, "inputs": [{"num": 0, "id": "src", "ship_strategy": "HASH"}]},
                  {"id": "src", "parallelism": 2},
                  {"id": "side", "parallelism": 2},
                  {"id": "lone", "parallelism": 2, "inputs": [{"num": 0, "id": "side", "ship_strategy": "FORWARD"}]}]}}""");
        answers.put("/jobs/job/checkpoints/config", "{\"mode\": \"exactly_once\", \"interval\": 10000}");
        answers.put("/jobs/job/checkpoints/details/7", """
                {"id": 7, "status": "COMPLETED", "tasks": {
                  "src": {"state_size": 1200, "num_subtasks": 2},
                  "keyed": {"state_size": 64000000, "num_subtasks": 2},
                  "sink": {"state_size": 0, "num_subtasks": 2},
                  "side": {"state_size": 0, "num_subtasks": 2},
                  "lone": {"state_size": 5000, "num_subtasks": 2}}}""");
        metrics("src", 0, 4000, 200);
        metrics("keyed", 4000, 4000, 1000);
        metrics("lone", 0, 10, 0);
    }

    /** The job's state, as {@code GET /jobs/job} answers it. */
    void state(String state) {
        answers.put("/jobs/job", """
                {"state": "%s", "vertices": [
                  {"id": "src", "name": "Source: events", "parallelism": 2},
                  {"id": "keyed", "name": "dedup", "parallelism": 2},
                  {"id": "sink", "name": "Sink: out", "parallelism": 2},
                  {"id": "side", "name": "Source: side", "parallelism": 2},
                  {"id": "lone", "name": "side-state", "parallelism": 2}]}""".formatted(state));
    }

    /** Checkpoint 7 completed, as {@code GET /jobs/job/checkpoints} answers it. */
    void checkpointCompleted() {
        answers.put("/jobs/job/checkpoints", "{\"latest\": {\"completed\": {\"id\": 7}}}");
    }

    RestJobEndpoint endpoint() {
        return new RestJobEndpoint(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), JOB,
                Duration.ofSeconds(5));
    }

    private void metrics(String vertex, double in, double out, double busyMsPerSecond) {
        answers.put("/jobs/job/vertices/" + vertex + "/subtasks/metrics", String.format(Locale.ROOT, """
                [{"id": "numRecordsInPerSecond", "sum": %.1f}, {"id": "numRecordsOutPerSecond", "sum": %.1f},
                 {"id": "busyTimeMsPerSecond", "sum": %.1f}]""", in, out, busyMsPerSecond));
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
