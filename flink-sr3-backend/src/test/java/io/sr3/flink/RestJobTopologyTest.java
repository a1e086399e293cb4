package io.sr3.flink;

import com.sun.net.httpserver.HttpServer;
import io.sr3.flink.replication.OperatorProfile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * What the replication planner reads of a job, over a real HTTP connection to a stand-in for the
 * JobManager's REST API answering in Flink 2.3's shapes: a source (2 subtasks) hashed into a keyed
 * operator (2), forwarded into a sink (2), and a separate pipeline of a source forwarded into a
 * stateful operator (2 each).
 */
class RestJobTopologyTest {

    private final Map<String, String> answers = new ConcurrentHashMap<>();
    private HttpServer server;
    private RestJobTopology topology;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String body = answers.get(exchange.getRequestURI().getPath());
            byte[] bytes = (body == null ? "{\"errors\": [\"Not found\"]}" : body).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(body == null ? 404 : 200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        RestJobEndpoint rest = new RestJobEndpoint(URI.create("http://127.0.0.1:" + server.getAddress().getPort()),
                "job", Duration.ofSeconds(5));
        topology = new RestJobTopology(rest, "job");
        answers.put("/jobs/job", """
                {"state": "RUNNING", "vertices": [
                  {"id": "src", "name": "Source: events", "parallelism": 2},
                  {"id": "keyed", "name": "dedup", "parallelism": 2},
                  {"id": "sink", "name": "Sink: out", "parallelism": 2},
                  {"id": "side", "name": "Source: side", "parallelism": 2},
                  {"id": "lone", "name": "side-state", "parallelism": 2}]}""");
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

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void theStatefulVerticesWithTheirStateRatesCapacityAndFailoverRegion() throws Exception {
        answers.put("/jobs/job/checkpoints", "{\"latest\": {\"completed\": {\"id\": 7}}}");

        RestJobTopology.Reading reading = topology.read();

        assertThat(reading.checkpointInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(reading.operators()).extracting(OperatorProfile::vertexId)
                .as("the sink and the side source hold no state").containsExactlyInAnyOrder("src", "keyed", "lone");
        OperatorProfile keyed = profile(reading, "keyed");
        assertThat(keyed.stateBytes()).isEqualTo(64_000_000);
        assertThat(keyed.inputRecordsPerSecond()).isEqualTo(4000);
        // 1000 ms busy per second over 2 subtasks: half busy, so twice the input rate is the capacity.
        assertThat(keyed.capacityRecordsPerSecond()).isCloseTo(8000, within(1e-6));
        assertThat(keyed.failoverRegionSubtasks()).as("hash joins src and keyed, forward joins sink").isEqualTo(6);
        OperatorProfile source = profile(reading, "src");
        assertThat(source.inputRecordsPerSecond()).as("a source's input is what it emits").isEqualTo(4000);
        OperatorProfile lone = profile(reading, "lone");
        assertThat(lone.failoverRegionSubtasks()).as("forward joins side i to lone i only").isEqualTo(2);
        assertThat(lone.capacityRecordsPerSecond()).as("never busy: capacity unknown").isInfinite();
    }

    @Test
    void nothingBeforeTheFirstCompletedCheckpoint() throws Exception {
        answers.put("/jobs/job/checkpoints", "{\"counts\": {\"completed\": 0}, \"latest\": {\"completed\": null}}");

        assertThat(topology.read()).isNull();
        assertThat(topology.state()).isEqualTo("RUNNING");
    }

    private void metrics(String vertex, double in, double out, double busyMsPerSecond) {
        answers.put("/jobs/job/vertices/" + vertex + "/subtasks/metrics", String.format(java.util.Locale.ROOT, """
                [{"id": "numRecordsInPerSecond", "sum": %.1f}, {"id": "numRecordsOutPerSecond", "sum": %.1f},
                 {"id": "busyTimeMsPerSecond", "sum": %.1f}]""", in, out, busyMsPerSecond));
    }

    private static OperatorProfile profile(RestJobTopology.Reading reading, String vertex) {
        return reading.operators().stream().filter(p -> p.vertexId().equals(vertex)).findFirst().orElseThrow();
    }
}
