package io.sr3.flink.cluster;

import io.sr3.flink.cluster.ProcessCluster.FlinkProcess;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * Measures one recovery on a {@link ProcessCluster}: SIGKILL a TaskManager that runs tasks of a
 * running job, then observe over REST (polling every 20 ms) when every task runs again and when
 * the first checkpoint after the restore completes.
 */
public final class RecoveryProbe {

    private static final long POLL_NANOS = 20_000_000L;

    private RecoveryProbe() {}

    /**
     * @param killToRunningMillis from the SIGKILL until the job and all its tasks were RUNNING again
     *     (after the JobManager had noticed the loss)
     * @param killToCheckpointMillis from the SIGKILL until the first checkpoint triggered after the
     *     restore completed (JobManager's acknowledgement timestamp)
     * @param restoredFrom the path of the checkpoint the job restored from
     */
    public record Recovery(String victim, long killToRunningMillis, long killToCheckpointMillis, String restoredFrom) {}

    /**
     * Kills {@code victim} (which must run tasks of {@code job}) and measures the recovery. If
     * {@code replacementZone} is not null, a replacement TaskManager is started right after the
     * kill (its start-up counts into the recovery if the job has no spare slot).
     */
    public static Recovery killAndMeasure(ProcessCluster cluster, JobID job, FlinkProcess victim, String replacementZone,
            Duration timeout) throws Exception {
        long restoredBefore = cluster.checkpoints(job).path("counts").path("restored").asLong(0);
        long killedAtMillis = System.currentTimeMillis();
        long killedAtNanos = System.nanoTime();
        cluster.kill(victim);
        if (replacementZone != null) {
            cluster.startTaskManager(replacementZone);
        }
        long deadline = killedAtNanos + timeout.toNanos();
        // The job first has to notice the loss (tasks leave RUNNING), then come back.
        while (cluster.allTasksRunning(job)
                && cluster.checkpoints(job).path("counts").path("restored").asLong(0) == restoredBefore) {
            check(deadline, "the JobManager to notice the loss of " + victim);
            LockSupport.parkNanos(POLL_NANOS);
        }
        while (!cluster.allTasksRunning(job)) {
            check(deadline, "every task of " + job + " to run again after the loss of " + victim);
            LockSupport.parkNanos(POLL_NANOS);
        }
        long runningMillis = (System.nanoTime() - killedAtNanos) / 1_000_000;
        while (true) {
            JsonNode checkpoints = cluster.checkpoints(job);
            JsonNode restored = checkpoints.path("latest").path("restored");
            JsonNode completed = checkpoints.path("latest").path("completed");
            if (!restored.isMissingNode() && !restored.isNull() && !completed.isMissingNode() && !completed.isNull()
                    && completed.path("id").asLong() > restored.path("id").asLong()
                    && completed.path("trigger_timestamp").asLong() >= restored.path("restore_timestamp").asLong()) {
                long ack = completed.path("latest_ack_timestamp").asLong();
                return new Recovery(victim.name(), runningMillis, ack - killedAtMillis, restored.path("external_path").asText());
            }
            check(deadline, "a checkpoint of " + job + " after the restore");
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    private static void check(long deadlineNanos, String what) {
        if (System.nanoTime() - deadlineNanos > 0) {
            throw new IllegalStateException("Timed out waiting for " + what);
        }
    }
}
