package io.sr3.flink.cluster;

import io.sr3.flink.testing.Deadline;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import javax.annotation.Nullable;

import java.time.Duration;

/**
 * Measures one recovery on a {@link ProcessCluster}: SIGKILL a TaskManager that runs tasks of a
 * running job, then observe over REST (polling every 20 ms) when the JobManager noticed the loss,
 * when every task runs again, when the first checkpoint after the restore completes, and
 * optionally when the job has caught up with its input (its processing lag, as the caller
 * measures it, is back within a bound).
 */
public final class RecoveryProbe {

    private static final Duration POLL = Duration.ofMillis(20);

    private RecoveryProbe() {}

    /**
     * @param killedAtMillis epoch millis of the SIGKILL (this JVM's clock, which the processes of one host share)
     * @param killToDetectedMillis from the SIGKILL until REST showed the loss (a task left RUNNING
     *     or a restore was counted)
     * @param killToRunningMillis from the SIGKILL until the job and all its tasks were RUNNING again
     *     (after the JobManager had noticed the loss)
     * @param killToCheckpointMillis from the SIGKILL until the first checkpoint triggered after the
     *     restore completed (JobManager's acknowledgement timestamp)
     * @param killToCaughtUpMillis from the SIGKILL until the first poll after RUNNING at which the
     *     lag was within the bound; -1 if no lag was measured
     * @param restoredFrom the path of the checkpoint the job restored from
     * @param restoredCheckpointId the id of that checkpoint
     */
    public record Recovery(String victim, long killedAtMillis, long killToDetectedMillis, long killToRunningMillis,
            long killToCheckpointMillis, long killToCaughtUpMillis, String restoredFrom, long restoredCheckpointId) {}

    /**
     * How far the job's processing is behind its input, in milliseconds, as the caller measures
     * it (for example from the keyed operator's input watermark and the input's schedule);
     * {@link Long#MAX_VALUE} while unknown.
     */
    @FunctionalInterface
    public interface Lag {
        long millis();
    }

    /**
     * Kills {@code victim} (which must run tasks of {@code job}) and measures the recovery. If
     * {@code replacementZone} is not null, a replacement TaskManager is started right after the
     * kill (its start-up counts into the recovery if the job has no spare slot).
     */
    public static Recovery killAndMeasure(ProcessCluster cluster, JobID job, FlinkProcess victim, String replacementZone,
            Duration timeout) throws Exception {
        return killAndMeasure(cluster, job, victim, replacementZone, timeout, null, 0);
    }

    /**
     * Like {@link #killAndMeasure(ProcessCluster, JobID, FlinkProcess, String, Duration)}, and
     * waits as well until the job has caught up: {@code lag} at most {@code caughtUpLagMillis} at
     * a poll after every task runs again. A lag known before the kill does not count: the restore
     * takes the job back to the restored checkpoint, which is further behind than any bound that
     * makes sense for a recovery of seconds.
     */
    public static Recovery killAndMeasure(ProcessCluster cluster, JobID job, FlinkProcess victim, String replacementZone,
            Duration timeout, @Nullable Lag lag, long caughtUpLagMillis) throws Exception {
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
        long detectedMillis = (System.nanoTime() - killedAtNanos) / 1_000_000;
        deadline.pollEvery(POLL, "every task of " + job + " to run again after the loss of " + victim,
                () -> cluster.allTasksRunning(job), () -> "");
        long runningMillis = (System.nanoTime() - killedAtNanos) / 1_000_000;
        long[] caughtUpMillis = {lag == null ? -1 : 0};
        long[] checkpointMillis = {0};
        JsonNode[] restored = new JsonNode[1];
        deadline.pollEvery(POLL, "a checkpoint of " + job + " after the restore"
                + (lag == null ? "" : ", and the job to catch up (lag <= " + caughtUpLagMillis + " ms)"), () -> {
                    if (caughtUpMillis[0] == 0 && lag.millis() <= caughtUpLagMillis) {
                        caughtUpMillis[0] = (System.nanoTime() - killedAtNanos) / 1_000_000;
                    }
                    if (checkpointMillis[0] == 0) {
                        JsonNode checkpoints = cluster.checkpoints(job);
                        JsonNode r = checkpoints.path("latest").path("restored");
                        JsonNode completed = checkpoints.path("latest").path("completed");
                        if (!r.isMissingNode() && !r.isNull() && !completed.isMissingNode() && !completed.isNull()
                                && completed.path("id").asLong() > r.path("id").asLong()
                                && completed.path("trigger_timestamp").asLong() >= r.path("restore_timestamp").asLong()) {
                            checkpointMillis[0] = completed.path("latest_ack_timestamp").asLong() - killedAtMillis;
                            restored[0] = r;
                        }
                    }
                    return checkpointMillis[0] != 0 && caughtUpMillis[0] != 0;
                }, () -> "checkpoint after the restore " + (checkpointMillis[0] != 0 ? "seen" : "not yet")
                        + ", caught up " + (caughtUpMillis[0] > 0 ? "at " + caughtUpMillis[0] + " ms" : "not yet"));
        return new Recovery(victim.name(), killedAtMillis, detectedMillis, runningMillis, checkpointMillis[0],
                caughtUpMillis[0], restored[0].path("external_path").asText(), restored[0].path("id").asLong());
    }
}
