package io.sr3.flink.cluster;

import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.FileResultSink;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static io.sr3.flink.cluster.ProcessClusterTestSupport.JOB_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGKILL as many TaskManagers as the replication factor, all of them holding replicas of every
 * checkpoint file (two TaskManagers, factor 2): the job cannot restore, fails with an error that
 * names the lost {@code sr3://} file, and never emits a result.
 */
class Sr3ProcessClusterLostReplicasITCase extends ProcessClusterTestBase {


    @Test
    void restoreFailsNamingTheLostFileWhenEveryReplicaIsGone() throws Exception {
        // Enough attempts that some outlast the deployments to the killed TaskManagers and reach a restore.
        cluster = ProcessCluster.start(ClusterSpec.sr3(2, 2).withRestartAttempts(8), ProcessClusterTestSupport.clusterDir(getClass().getSimpleName()));
        TestJobSpec spec = TestJobSpec.of("process-lost").withRecords(16_000, 800).withKeys(64).withPayload(2048, 4);
        Path results = tempDir.resolve("results");
        JobID job = cluster.submit(ClusterJobs.statefulJob(spec, 2, results, Duration.ofMillis(500), false, null));
        cluster.awaitAllTasksRunning(job, JOB_TIMEOUT);
        Deadline.poll("two completed checkpoints of " + job, JOB_TIMEOUT, () -> cluster.completedCheckpoints(job) >= 2,
                () -> cluster.checkpoints(job).toString());

        List<FlinkProcess> holders = cluster.liveTaskManagers();
        cluster.kill(holders.toArray(new FlinkProcess[0]));
        cluster.startTaskManager("");
        cluster.startTaskManager("");

        cluster.awaitJobStatus(job, JOB_TIMEOUT, "FAILED");
        String exceptions = cluster.exceptions(job);
        assertThat(exceptions).as("exception history of %s", job).containsPattern(
                "Lost sr3://[^ ]+ \\(block b-|sr3://[^ ]+ does not exist on the sr3 ring"
                        + "|Cannot tell whether manifest of sr3://[^ ]+ \\(m-[0-9a-f-]+\\) exists");
        assertThat(FileResultSink.read(results)).as("results emitted by a job whose state was lost").isEmpty();
    }
}
