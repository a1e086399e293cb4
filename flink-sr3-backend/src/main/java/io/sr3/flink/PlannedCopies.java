package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.replication.ReplicaChoice;
import io.sr3.flink.replication.ReplicationPlan;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The copies one operator's checkpoint files ask for on a TaskManager: what the job's published
 * replication plan gives the operator's job vertex, read from the ring at most every
 * {@link #REFRESH}. Until a plan is published, and for a vertex the plan does not name, files get
 * the replication factor. A plan that cannot be read leaves the last one read in force, and is
 * logged once per outage.
 */
@ThreadSafe
final class PlannedCopies {

    private static final Logger LOG = LoggerFactory.getLogger(PlannedCopies.class);
    static final Duration REFRESH = Duration.ofSeconds(5);

    private final String jobId;
    private final String vertexId;
    private final LongSupplier nanoClock;
    @GuardedBy("this") @Nullable private ReplicationPlan plan;
    @GuardedBy("this") private long readAtNanos;
    @GuardedBy("this") private boolean read;
    @GuardedBy("this") private boolean failing;

    PlannedCopies(String jobId, String vertexId) {
        this(jobId, vertexId, System::nanoTime);
    }

    PlannedCopies(String jobId, String vertexId, LongSupplier nanoClock) {
        this.jobId = jobId;
        this.vertexId = vertexId;
        this.nanoClock = nanoClock;
    }

    String vertexId() {
        return vertexId;
    }

    /** The copies a new file of the operator asks for; 0 for the replication factor. */
    int copies() {
        return choice().map(ReplicaChoice::copies).orElse(0);
    }

    /** The operator's entry in the current plan, if the plan names it. */
    Optional<ReplicaChoice> choice() {
        ReplicationPlan current = current();
        if (current == null) {
            return Optional.empty();
        }
        return current.choices().stream().filter(c -> c.vertexId().equals(vertexId)).findFirst();
    }

    private synchronized ReplicationPlan current() {
        long now = nanoClock.getAsLong();
        if (read && now - readAtNanos < REFRESH.toNanos()) {
            return plan;
        }
        read = true;
        readAtNanos = now;
        Optional<RingNode> node = LocalRing.running();
        if (node.isEmpty()) {
            return plan;
        }
        try {
            ReplicationPlan fresh = RingReplicationPlans.read(node.get(), jobId);
            if (fresh != null) {
                plan = fresh;
            }
            if (failing) {
                failing = false;
                LOG.info("[replication {}] the plan of vertex {} is readable again", jobId, vertexId);
            }
        } catch (IOException | RuntimeException e) {
            if (!failing) {
                failing = true;
                LOG.warn("[replication {}] could not read the replication plan from the ring ({}); vertex {} keeps {}",
                        jobId, e.getMessage(), vertexId, plan == null ? "the replication factor" : "its last plan");
            }
        }
        return plan;
    }

    @Override
    public String toString() {
        return "PlannedCopies(job " + jobId + ", vertex " + vertexId + ")";
    }
}
