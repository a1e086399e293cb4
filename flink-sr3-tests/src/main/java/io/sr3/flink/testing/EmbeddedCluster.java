package io.sr3.flink.testing;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.HeartbeatManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.util.FileUtils;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * An embedded Flink {@link MiniCluster} with its own working directory, and the few questions the
 * MiniCluster tests, the demo and the benchmarks ask it. Its REST endpoint listens on a free port
 * ({@link #restUrl()}) unless the configuration names one; {@link #close} cancels the jobs still
 * running (a cluster with running jobs closes slowly), then stops the cluster.
 *
 * <p>TaskManager {@code i} works in {@code <workDir>/minicluster_<id>/tm_<i>}; RocksDB puts its
 * instances in that directory's {@code tmp/}, which is how {@link #taskManagerWithMostStateInstances}
 * tells where a job's keyed state lives without reaching into the cluster's private fields.
 */
@NotThreadSafe
public final class EmbeddedCluster implements AutoCloseable {

    private static final Duration RPC_WAIT = Duration.ofSeconds(30);

    private final MiniCluster miniCluster;
    private final Path workDirectory;
    private final int initialTaskManagers;

    private EmbeddedCluster(MiniCluster miniCluster, Path workDirectory, int initialTaskManagers) {
        this.miniCluster = miniCluster;
        this.workDirectory = workDirectory;
        this.initialTaskManagers = initialTaskManagers;
    }

    /** Starts a cluster of {@code taskManagers} x {@code slotsPerTaskManager} working under {@code workDirectory}. */
    public static EmbeddedCluster start(Configuration config, int taskManagers, int slotsPerTaskManager, Path workDirectory)
            throws Exception {
        Files.createDirectories(workDirectory);
        Configuration clusterConfig = new Configuration(config);
        clusterConfig.set(ClusterOptions.PROCESS_WORKING_DIR_BASE, workDirectory.toString());
        clusterConfig.set(CoreOptions.TMP_DIRS, workDirectory.toString());
        // A terminated TaskManager usually tells the JobManager at once; when that message is lost,
        // only the heartbeat notices, and Flink's default 50 s timeout would stall the recovery.
        clusterConfig.set(HeartbeatManagerOptions.HEARTBEAT_INTERVAL, Duration.ofSeconds(1));
        clusterConfig.set(HeartbeatManagerOptions.HEARTBEAT_TIMEOUT, Duration.ofSeconds(5));
        if (!config.contains(RestOptions.BIND_PORT)) {
            clusterConfig.set(RestOptions.BIND_PORT, "0");
        }
        MiniCluster miniCluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(clusterConfig)
                .setNumTaskManagers(taskManagers)
                .setNumSlotsPerTaskManager(slotsPerTaskManager)
                .build());
        miniCluster.start();
        return new EmbeddedCluster(miniCluster, workDirectory, taskManagers);
    }

    public MiniCluster miniCluster() {
        return miniCluster;
    }

    /** The REST endpoint, for example {@code http://localhost:37211}. */
    public String restUrl() throws Exception {
        return miniCluster.getRestAddress().get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS).toString();
    }

    public JobID submit(JobGraph job) throws Exception {
        return miniCluster.submitJob(job).get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS).getJobID();
    }

    /** A fresh snapshot of the job's execution graph, checkpoint statistics included. */
    public AccessExecutionGraph graph(JobID jobId) throws Exception {
        return miniCluster.getExecutionGraph(jobId).get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    public JobStatus status(JobID jobId) throws Exception {
        return miniCluster.getJobStatus(jobId).get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    public JobResult awaitResult(JobID jobId, Duration timeout) throws Exception {
        return miniCluster.requestJobResult(jobId).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Closes TaskManager {@code index} (its tasks fail at once); indexes of closed TaskManagers are never reused. */
    public void terminateTaskManager(int index) throws Exception {
        miniCluster.terminateTaskManager(index).get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Starts one more TaskManager, as a resource manager replaces a lost one; it takes the next unused index. */
    public void startTaskManager() throws Exception {
        miniCluster.startTaskManager();
    }

    /**
     * The index of the TaskManager that holds the most RocksDB instances of {@code jobId}, or 0 if
     * none is found (heap working state keeps nothing on disk).
     */
    public int taskManagerWithMostStateInstances(JobID jobId) throws IOException {
        int best = 0;
        long most = 0;
        for (int i = 0; i < initialTaskManagers; i++) {
            long count = countInstances(i, jobId);
            if (count > most) {
                most = count;
                best = i;
            }
        }
        return best;
    }

    private long countInstances(int taskManager, JobID jobId) throws IOException {
        long count = 0;
        try (Stream<Path> clusters = Files.list(workDirectory)) {
            for (Path cluster : clusters.filter(p -> p.getFileName().toString().startsWith("minicluster_")).toList()) {
                File tmp = cluster.resolve("tm_" + taskManager).resolve("tmp").toFile();
                String[] names = tmp.list((dir, name) -> name.startsWith("job_" + jobId + "_op_"));
                count += names == null ? 0 : names.length;
            }
        }
        return count;
    }

    /**
     * Cancels the jobs still running and closes the MiniCluster; when that hangs, prints every
     * thread's stack first, so the hang can be diagnosed.
     */
    @Override
    public void close() throws Exception {
        try {
            cancelRunningJobs();
            miniCluster.closeAsync().get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            System.err.println("The MiniCluster did not close within " + RPC_WAIT + "; threads:");
            for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
                System.err.print(thread);
            }
            throw e;
        } finally {
            FileUtils.deleteDirectory(workDirectory.toFile());
        }
    }

    private void cancelRunningJobs() throws Exception {
        for (JobStatusMessage job : miniCluster.listJobs().get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            if (!job.getJobState().isGloballyTerminalState()) {
                miniCluster.cancelJob(job.getJobId()).get(RPC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                awaitResult(job.getJobId(), Duration.ofSeconds(60));
            }
        }
    }
}
