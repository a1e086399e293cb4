package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.pacing.RestoreRateSource;
import io.sr3.flink.replication.FailureCostModel;
import io.sr3.flink.replication.OperatorCost;
import io.sr3.flink.replication.OperatorProfile;
import io.sr3.flink.replication.RecoveryFacts;
import io.sr3.flink.replication.ReplicaChoice;
import io.sr3.flink.replication.ReplicationPlan;
import io.sr3.flink.replication.ReplicationPolicy;
import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One job's replication planner on the JobManager. Each {@link #round}: read the job's stateful
 * vertices from Flink's REST API, price the loss of each one's state ({@link FailureCostModel})
 * with the restore rate the ring measured, choose each one's copies within the budget
 * ({@link ReplicationPolicy}), log every choice that changed, and publish the plan to the ring,
 * where the job's TaskManagers read it for the files they create next.
 */
@NotThreadSafe
final class ReplicationPlanner {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationPlanner.class);
    private static final Set<String> TERMINAL = Set.of("FINISHED", "CANCELED", "FAILED");

    private final String jobId;
    private final ReplicationSetup setup;
    private final RestJobTopology topology;
    private final RestoreRateSource restoreRates;
    private final ReplicationPolicy policy;
    /** Copies and zones per vertex as last logged: only changes are logged again. */
    private final Map<String, String> logged = new HashMap<>();
    @Nullable private ReplicationPlan latest;
    /** Rounds failed in a row; only the first of a run is logged. */
    int failedRounds;
    /**
     * Whether the REST API has known the job: before, a 404 means the job is still being set up
     * (the planner starts with its checkpoint coordinator); after, that it is gone.
     */
    boolean sawJob;

    ReplicationPlanner(String jobId, ReplicationSetup setup, RestJobTopology topology, RestoreRateSource restoreRates) {
        this.jobId = jobId;
        this.setup = setup;
        this.topology = topology;
        this.restoreRates = restoreRates;
        this.policy = new ReplicationPolicy(setup.settings());
    }

    /** The plan last published, or null before the first. */
    @Nullable
    ReplicationPlan latest() {
        return latest;
    }

    /**
     * One planning round; returns once the plan is stored on a write quorum.
     *
     * @return false once the job reached a terminal state: the planner is done
     */
    boolean round() throws IOException {
        String state = topology.state();
        sawJob = true;
        if (TERMINAL.contains(state)) {
            LocalRing.running().ifPresent(node -> RingReplicationPlans.clear(node, jobId));
            LOG.info("[replication {}] job is {}; planner stopped and its plan deleted", jobId, state);
            return false;
        }
        if (!"RUNNING".equals(state)) {
            return true;
        }
        RestJobTopology.Reading reading = topology.read();
        RingNode node = LocalRing.running().orElse(null);
        if (reading == null || node == null) {
            return true;
        }
        ConsistentHash ring = node.membership().ring();
        if (ring.size() == 0) {
            return true; // no storage node has joined yet: nothing to place copies on
        }
        Set<String> zones = new HashSet<>();
        for (Member member : ring.members()) {
            zones.add(member.effectiveZone());
        }
        long restoreRate = Math.round(restoreRates.bytesPerSecond().orElse(setup.restoreBytesPerSecond()));
        Duration interval = reading.checkpointInterval().isZero() ? setup.interval() : reading.checkpointInterval();
        RecoveryFacts facts = new RecoveryFacts(Math.max(1, restoreRate), setup.detection(), interval.dividedBy(2));
        List<OperatorCost> costs = new ArrayList<>();
        for (OperatorProfile operator : reading.operators()) {
            costs.add(FailureCostModel.cost(operator, facts));
        }
        ReplicationPlan plan = policy.plan(costs, ring.size(), zones.size());
        for (ReplicaChoice choice : plan.choices()) {
            String summary = choice.copies() + "/" + choice.zones();
            if (!summary.equals(logged.put(choice.vertexId(), summary))) {
                LOG.info("[replication {}] {}", jobId, plan.logLine(choice));
            }
        }
        RingStorage.await(RingReplicationPlans.publish(node, jobId, plan, System.currentTimeMillis()));
        latest = plan;
        return true;
    }
}
