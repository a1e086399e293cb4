package io.sr3.flink.harness;

import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testing.EmbeddedCluster;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.checkpoint.SubtaskStateStats;
import org.apache.flink.runtime.checkpoint.TaskStateStats;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecution;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads one job's progress from its execution graph: task states and attempts, and Flink's own
 * checkpoint statistics (trigger to last acknowledgement, state size).
 */
public final class JobProbe {

    private final EmbeddedCluster cluster;
    private final JobID jobId;

    public JobProbe(EmbeddedCluster cluster, JobID jobId) {
        this.cluster = cluster;
        this.jobId = jobId;
    }

    /** Submits {@code job} to {@code cluster} and waits up to a minute until every task of it runs. */
    public static JobProbe submitAndAwaitRunning(EmbeddedCluster cluster, JobGraph job) throws Exception {
        JobProbe probe = new JobProbe(cluster, cluster.submit(job));
        probe.await("all tasks running", Duration.ofSeconds(60), Duration.ofMillis(20), JobProbe::allRunning);
        return probe;
    }

    public JobID jobId() {
        return jobId;
    }

    public AccessExecutionGraph graph() throws Exception {
        return cluster.graph(jobId);
    }

    /** The highest attempt number over all subtasks: it grows by one with every restart. */
    public static int attempt(AccessExecutionGraph graph) {
        int max = 0;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            max = Math.max(max, v.getCurrentExecutionAttempt().getAttemptNumber());
        }
        return max;
    }

    /** Whether every subtask is RUNNING (or already FINISHED), so state restore is over. */
    public static boolean allRunning(AccessExecutionGraph graph) {
        if (graph.getState() != JobStatus.RUNNING && graph.getState() != JobStatus.FINISHED) {
            return false;
        }
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            ExecutionState s = v.getExecutionState();
            if (s != ExecutionState.RUNNING && s != ExecutionState.FINISHED) {
                return false;
            }
        }
        return true;
    }

    /** When the last subtask of the current attempts switched to RUNNING (epoch millis), or 0. */
    public static long lastSwitchToRunning(AccessExecutionGraph graph) {
        long latest = 0;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            latest = Math.max(latest, v.getCurrentExecutionAttempt().getStateTimestamp(ExecutionState.RUNNING));
        }
        return latest;
    }

    /** The longest INITIALIZING phase (state restore inside the task) of the current attempts. */
    public static long longestInitializationMillis(AccessExecutionGraph graph) {
        long longest = 0;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            AccessExecution e = v.getCurrentExecutionAttempt();
            long init = e.getStateTimestamp(ExecutionState.INITIALIZING);
            long running = e.getStateTimestamp(ExecutionState.RUNNING);
            if (init > 0 && running >= init) {
                longest = Math.max(longest, running - init);
            }
        }
        return longest;
    }

    /**
     * The earliest time (epoch millis, not before {@code notBefore}) at which a subtask attempt
     * FAILED, from the execution histories; 0 if none did.
     */
    public static long earliestFailure(AccessExecutionGraph graph, long notBefore) {
        long earliest = Long.MAX_VALUE;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            for (AccessExecution e : v.getExecutionHistory().getHistoricalExecutions()) {
                long failed = e.getStateTimestamp(ExecutionState.FAILED);
                if (failed >= notBefore && failed > 0) {
                    earliest = Math.min(earliest, failed);
                }
            }
        }
        return earliest == Long.MAX_VALUE ? 0 : earliest;
    }

    public static long completedCheckpoints(AccessExecutionGraph graph) {
        return graph.getCheckpointStatsSnapshot().getCounts().getNumberOfCompletedCheckpoints();
    }

    public static long failedCheckpoints(AccessExecutionGraph graph) {
        return graph.getCheckpointStatsSnapshot().getCounts().getNumberOfFailedCheckpoints();
    }

    /** Completed checkpoints still in the statistics history (see {@code web.checkpoints.history}), oldest first. */
    public static List<CheckpointRecord> completed(AccessExecutionGraph graph) {
        CheckpointStatsSnapshot stats = graph.getCheckpointStatsSnapshot();
        List<CheckpointRecord> records = new ArrayList<>();
        for (AbstractCheckpointStats c : stats.getHistory().getCheckpoints()) {
            if (c.getStatus() == CheckpointStatsStatus.COMPLETED) {
                long syncMillis = 0;
                long asyncMillis = 0;
                for (TaskStateStats task : c.getAllTaskStateStats()) {
                    for (SubtaskStateStats subtask : task.getSubtaskStats()) {
                        if (subtask != null) {
                            syncMillis = Math.max(syncMillis, subtask.getSyncCheckpointDuration());
                            asyncMillis = Math.max(asyncMillis, subtask.getAsyncCheckpointDuration());
                        }
                    }
                }
                records.add(new CheckpointRecord(c.getCheckpointId(), c.getTriggerTimestamp(),
                        c.getEndToEndDuration(), c.getStateSize(), c.getCheckpointedSize(),
                        syncMillis, asyncMillis));
            }
        }
        records.sort(Comparator.comparingLong(CheckpointRecord::id));
        return records;
    }

    @Nullable
    public static CheckpointRecord latestCompleted(AccessExecutionGraph graph) {
        List<CheckpointRecord> all = completed(graph);
        return all.isEmpty() ? null : all.get(all.size() - 1);
    }

    @Nullable
    public static RestoredCheckpointStats restored(AccessExecutionGraph graph) {
        return graph.getCheckpointStatsSnapshot().getLatestRestoredCheckpoint();
    }

    /**
     * Polls until the condition holds on a fresh graph, every {@code every}, failing after {@code
     * timeout}, or at once when the job ends first.
     */
    public AccessExecutionGraph await(String what, Duration timeout, Duration every, GraphCondition condition) {
        AccessExecutionGraph[] last = new AccessExecutionGraph[1];
        Deadline.in(timeout).pollEvery(every, what, () -> {
            AccessExecutionGraph g = last[0] = uncheckedGraph();
            if (condition.holds(g)) {
                return true;
            }
            if (g.getState().isGloballyTerminalState()) {
                throw new IllegalStateException("Job " + jobId + " ended (" + g.getState() + ") while waiting for: "
                        + what + (g.getFailureInfo() != null ? "; failure: " + g.getFailureInfo().getExceptionAsString()
                        : ""));
            }
            return false;
        }, () -> last[0] == null ? "no graph read" : "job " + last[0].getState() + ", attempt " + attempt(last[0])
                + ", completed checkpoints " + completedCheckpoints(last[0]));
        return last[0];
    }

    private AccessExecutionGraph uncheckedGraph() {
        try {
            return graph();
        } catch (Exception e) {
            throw new IllegalStateException("Could not read the execution graph of job " + jobId, e);
        }
    }

    /** A condition on an execution graph snapshot. */
    @FunctionalInterface
    public interface GraphCondition {
        boolean holds(AccessExecutionGraph graph);
    }

    /**
     * One completed checkpoint as Flink's statistics saw it.
     *
     * @param longestSyncMillis the longest synchronous part of any subtask
     * @param longestAsyncMillis the longest asynchronous part (state upload) of any subtask
     */
    public record CheckpointRecord(long id, long triggerTimestamp, long endToEndMillis, long stateSize,
            long checkpointedSize, long longestSyncMillis, long longestAsyncMillis) {}
}
