package io.sr3.flink.cluster;

import io.sr3.flink.testing.Deadline;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;

/**
 * Measures one recovery on a {@link ProcessCluster}: SIGKILL a TaskManager that runs tasks of a
 * running job, then observe over REST (polling every 20 ms) when every task runs again and when
 * the first checkpoint after the restore completes.
 */
public final class RecoveryProbe {

    private static final Duration POLL = Duration.ofMillis(20);

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
        Deadline deadline = Deadline.in(timeout);
        cluster.kill(victim);
        if (replacementZone != null) {
            cluster.startTaskManager(replacementZone);
        }
        // The job first has to notice the loss (tasks leave RUNNING), then come back.
        deadline.pollEvery(POLL, "the JobManager to notice the loss of " + victim, () -> !cluster.allTasksRunning(job)
                || cluster.checkpoints(job).path("counts").path("restored").asLong(0) != restoredBefore, () -> "");
        deadline.pollEvery(POLL, "every task of " + job + " to run again after the loss of " + victim,
                () -> cluster.allTasksRunning(job), () -> "");
        long runningMillis = (System.nanoTime() - killedAtNanos) / 1_000_000;
        JsonNode[] latest = new JsonNode[1];
        deadline.pollEvery(POLL, "a checkpoint of " + job + " after the restore", () -> {
            latest[0] = cluster.checkpoints(job).path("latest");
            JsonNode restored = latest[0].path("restored");
            JsonNode completed = latest[0].path("completed");
            return !restored.isMissingNode() && !restored.isNull() && !completed.isMissingNode() && !completed.isNull()
                    && completed.path("id").asLong() > restored.path("id").asLong()
                    && completed.path("trigger_timestamp").asLong() >= restored.path("restore_timestamp").asLong();
        }, () -> String.valueOf(latest[0]));
        long ack = latest[0].path("completed").path("latest_ack_timestamp").asLong();
        return new Recovery(victim.name(), runningMillis, ack - killedAtMillis,
                latest[0].path("restored").path("external_path").asText());
    }
}
