package io.sr3.flink.pacing;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the endpoint reads from Flink's checkpoint details (the shape of Flink 2.3's REST answer). */
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

    @Test
    void withoutTasksTheWholeStateIsOneSubtasksShare() throws Exception {
        assertThat(RestJobEndpoint.largestShare(JSON.readTree("{\"id\": 3}"), 1000)).isEqualTo(1000);
        assertThat(RestJobEndpoint.largestShare(JSON.readTree("{\"tasks\": {}}"), 1000)).isEqualTo(1000);
    }
}
