package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.pacing.RestoreRateSource;
import io.sr3.flink.replication.ReplicaChoice;
import io.sr3.flink.replication.ReplicationMode;
import io.sr3.flink.replication.ReplicationPlan;
import io.sr3.flink.replication.ReplicationSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalDouble;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One job's replication planner against a stand-in REST API ({@link FakeJobRest}) and a real ring
 * of four nodes: what it publishes is what a TaskManager's {@link PlannedCopies} reads, and a job
 * that ended takes its plan with it.
 */
class ReplicationPlannerTest {

    @TempDir Path root;

    private TestingRing ring;
    private FakeJobRest rest;
    private ReplicationPlanner planner;

    @BeforeEach
    void start() throws Exception {
        for (RingNode stray : LocalRing.nodes()) {
            stray.close();
        }
        ring = TestingRing.start(4, TestingRing.testConfig(), root);
        rest = new FakeJobRest();
        // Budget 2.2 over ~64 MB: the 64 MB keyed state stays at 2, the small source and side state get 3.
        ReplicationSetup setup = new ReplicationSetup(new ReplicationSettings(ReplicationMode.COST_AWARE, 2.2, 2, 3, 2),
                Duration.ofSeconds(1), "http://unused", Duration.ofSeconds(5), 100_000_000);
        RestoreRateSource nothingMeasured = OptionalDouble::empty;
        planner = new ReplicationPlanner(FakeJobRest.JOB, setup, new RestJobTopology(rest.endpoint(), FakeJobRest.JOB),
                nothingMeasured);
    }

    @AfterEach
    void stop() {
        rest.close();
        ring.close();
    }

    @Test
    void aRoundPublishesThePlanThatTaskManagersRead() throws Exception {
        assertThat(planner.round()).as("no completed checkpoint yet: nothing to plan, keep going").isTrue();
        assertThat(planner.latest()).isNull();

        rest.checkpointCompleted();
        assertThat(planner.round()).isTrue();

        ReplicationPlan published = RingReplicationPlans.read(ring.node(1), FakeJobRest.JOB);
        assertThat(published).isEqualTo(planner.latest());
        assertThat(published.choices()).extracting(ReplicaChoice::vertexId).containsExactly("keyed", "lone", "src");
        assertThat(new PlannedCopies(FakeJobRest.JOB, "keyed").copies()).isEqualTo(2);
        assertThat(new PlannedCopies(FakeJobRest.JOB, "lone").copies()).isEqualTo(3);
        assertThat(new PlannedCopies(FakeJobRest.JOB, "src").copies()).isEqualTo(3);
        assertThat(new PlannedCopies(FakeJobRest.JOB, "sink").copies()).as("not in the plan: the replication factor")
                .isZero();
    }

    @Test
    void aJobThatEndedHasItsPlanDeletedAndItsPlannerStops() throws Exception {
        rest.checkpointCompleted();
        planner.round();
        assertThat(RingReplicationPlans.read(ring.node(2), FakeJobRest.JOB)).isNotNull();

        rest.state("FINISHED");
        assertThat(planner.round()).isFalse();
        assertThat(RingReplicationPlans.read(ring.node(2), FakeJobRest.JOB)).isNull();
    }
}
