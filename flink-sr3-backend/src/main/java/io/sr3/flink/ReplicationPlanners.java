package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.pacing.JobEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The running replication planners of this JobManager process, at most one per job, each on its
 * own daemon thread, every {@code sr3.replication.interval}. Static for the same reason as
 * {@link CheckpointPacers}: the per-job accesses Flink creates for each new execution graph of a
 * job cannot reach each other otherwise. A planner removes itself when its job ends.
 */
@ThreadSafe
final class ReplicationPlanners {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationPlanners.class);
    private static final Map<String, ScheduledExecutorService> RUNNING = new ConcurrentHashMap<>();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

    private ReplicationPlanners() {}

    /** Starts the planner of {@code jobId} unless one runs already. */
    static void startIfAbsent(String jobId, ReplicationSetup setup) {
        RUNNING.computeIfAbsent(jobId, id -> {
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "sr3-replication-planner-" + id);
                t.setDaemon(true);
                return t;
            });
            RestJobEndpoint rest = new RestJobEndpoint(URI.create(setup.restUrl()), id, REQUEST_TIMEOUT);
            ReplicationPlanner planner = new ReplicationPlanner(id, setup, new RestJobTopology(rest, id),
                    new RingRestoreRateSource());
            LOG.info("[replication {}] cost-aware replication: budget {} copies per byte, {}..{} copies per operator, "
                    + "replanned every {} from {}", id, setup.settings().budget(), setup.settings().minCopies(),
                    setup.settings().maxCopies(), setup.interval(), setup.restUrl());
            executor.scheduleWithFixedDelay(() -> round(id, planner, executor), 0, setup.interval().toMillis(),
                    TimeUnit.MILLISECONDS);
            return executor;
        });
    }

    private static void round(String jobId, ReplicationPlanner planner, ScheduledExecutorService executor) {
        try {
            if (!planner.round()) {
                RUNNING.remove(jobId, executor);
                executor.shutdown();
            }
            planner.failedRounds = 0;
        } catch (IOException | RuntimeException e) {
            if (e instanceof JobEndpoint.UnknownJobException && planner.sawJob) {
                LOG.info("[replication {}] the REST API no longer knows the job; planner stopped and its plan deleted",
                        jobId);
                LocalRing.running().ifPresent(node -> RingReplicationPlans.clear(node, jobId));
                RUNNING.remove(jobId, executor);
                executor.shutdown();
                return;
            }
            if (planner.failedRounds++ == 0) {
                LOG.warn("[replication {}] planning round failed ({}); the last plan stays in force, retrying every "
                        + "round (logged again once a round succeeded)", jobId, e.toString());
            }
        }
    }

    /** Whether a planner runs for {@code jobId} in this process (for tests). */
    static boolean isRunning(String jobId) {
        return RUNNING.containsKey(jobId);
    }
}
