package io.sr3.flink;

import com.sun.net.httpserver.HttpServer;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** What the endpoint reads from Flink's REST answers (their shape in Flink 2.3). */
class RestJobEndpointTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theLargestShareIsTheLargestStatePerSubtaskOverTheTasks() throws Exception {
        String details = """
                {"id": 8, "status": "COMPLETED", "state_size": 285607501,
                 "tasks": {
                   "7b9e64d2f782dba1937622dd7c7ff95a": {"state_size": 265, "num_subtasks": 1},
                   "0765281b88c6fc9b9fc311b0ad34a2b6": {"state_size": 285607236, "num_subtasks": 2}}}""";

        assertThat(RestJobEndpoint.largestShare(JSON.readTree(details), 285607501)).isEqualTo(142803618);
    }

    /** The answers of Flink 2.3 to {@code GET /jobs/:job/checkpoints/:trigger}. */
    @Test
    void aTriggerRequestFailedOnlyWhenItCompletedWithAFailureCause() throws Exception {
        assertThat(RestJobEndpoint.failed(JSON.readTree("{\"status\": {\"id\": \"IN_PROGRESS\"}}"))).isFalse();
        assertThat(RestJobEndpoint.failed(JSON.readTree(
                "{\"status\": {\"id\": \"COMPLETED\"}, \"operation\": {\"checkpointId\": 9}}"))).isFalse();
        assertThat(RestJobEndpoint.failed(JSON.readTree("{\"status\": {\"id\": \"COMPLETED\"}, \"operation\": "
                + "{\"checkpointId\": null, \"failureCause\": {\"class\": \"org.apache.flink.runtime.checkpoint."
                + "CheckpointException\", \"stack-trace\": \"...\"}}}"))).isTrue();
    }

    /**
     * Over a real HTTP connection to a stand-in for the JobManager's REST API: a trigger request
     * answered with a failure shows as a failed trigger after it, though no failed checkpoint is in
     * the history, so the pacer does not wait for a checkpoint that will never come.
     */
    @Test
    void aTriggerRequestAnsweredWithAFailureIsReportedAsAFailedTrigger() throws Exception {
        AtomicReference<String> triggerStatus = new AtomicReference<>("{\"status\": {\"id\": \"IN_PROGRESS\"}}");
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            String body;
            if ("POST".equals(exchange.getRequestMethod())) {
                body = "{\"request-id\": \"r1\"}";
            } else if (path.endsWith("/checkpoints/r1")) {
                body = triggerStatus.get();
            } else if (path.endsWith("/checkpoints")) {
                body = "{\"counts\": {\"in_progress\": 0}, \"history\": []}";
            } else if (path.endsWith("/plan")) {
                body = "{\"plan\": {\"nodes\": [{\"id\": \"v\"}]}}";
            } else if (path.endsWith("/metrics")) {
                body = "[{\"id\": \"0.numRecordsOut\", \"value\": \"10\"}, {\"id\": \"0.accumulateBusyTimeMs\", "
                        + "\"value\": \"1\"}, {\"id\": \"0.accumulateBackPressuredTimeMs\", \"value\": \"0\"}, "
                        + "{\"id\": \"0.accumulateIdleTimeMs\", \"value\": \"9\"}]";
            } else {
                body = "{\"state\": \"RUNNING\", \"vertices\": [{\"id\": \"v\", \"name\": \"source\", "
                        + "\"parallelism\": 1}]}";
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        try {
            RestJobEndpoint endpoint = new RestJobEndpoint(
                    URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/"), "job", Duration.ofSeconds(5));
            assertThat(endpoint.poll().latestFailedTrigger()).isNull();

            Instant requested = Instant.now();
            endpoint.triggerCheckpoint();
            assertThat(endpoint.poll().latestFailedTrigger()).as("the request still runs").isNull();

            triggerStatus.set("{\"status\": {\"id\": \"COMPLETED\"}, \"operation\": {\"failureCause\": "
                    + "{\"class\": \"org.apache.flink.runtime.checkpoint.CheckpointException\"}}}");
            assertThat(endpoint.poll().latestFailedTrigger()).as("answered with a failure").isNotNull()
                    .isAfterOrEqualTo(requested);
        } finally {
            server.stop(0);
        }
    }

    @Test
    void withoutTasksTheWholeStateIsOneSubtasksShare() throws Exception {
        assertThat(RestJobEndpoint.largestShare(JSON.readTree("{\"id\": 3}"), 1000)).isEqualTo(1000);
        assertThat(RestJobEndpoint.largestShare(JSON.readTree("{\"tasks\": {}}"), 1000)).isEqualTo(1000);
    }
}
