package io.sr3.flink;

import io.sr3.flink.replication.OperatorProfile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** What the replication planner reads of a job, over real HTTP from a {@link FakeJobRest}. */
class RestJobTopologyTest {

    private FakeJobRest rest;
    private RestJobTopology topology;

    @BeforeEach
    void start() throws Exception {
        rest = new FakeJobRest();
        topology = new RestJobTopology(rest.endpoint(), FakeJobRest.JOB);
    }

    @AfterEach
    void stop() {
        rest.close();
    }

    @Test
    void theStatefulVerticesWithTheirStateRatesCapacityAndFailoverRegion() throws Exception {
        rest.checkpointCompleted();

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
        assertThat(topology.read()).isNull();
        assertThat(topology.state()).isEqualTo("RUNNING");
    }

    private static OperatorProfile profile(RestJobTopology.Reading reading, String vertex) {
        return reading.operators().stream().filter(p -> p.vertexId().equals(vertex)).findFirst().orElseThrow();
    }
}
