package io.sr3.flink.cluster;

import io.sr3.flink.testjob.BurstSchedule;
import io.sr3.flink.testjob.FileResultSink;
import io.sr3.flink.testjob.ScheduledTestJob;
import io.sr3.flink.testjob.StatefulTestJob;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Job graphs of {@link StatefulTestJob} for a {@link ProcessCluster}: results go to a
 * {@link FileResultSink} in a shared directory. The graph carries no state backend or checkpoint
 * storage: the cluster's {@code config.yaml} decides, as it would for a user's job.
 */
public final class ClusterJobs {

    private ClusterJobs() {}

    /**
     * @param checkpointInterval the job's checkpoint interval
     * @param retainOnCancellation keep the latest checkpoint when the job is cancelled or fails
     * @param restorePath a retained checkpoint to start from, or null
     */
    public static JobGraph statefulJob(TestJobSpec spec, int parallelism, Path resultDir, Duration checkpointInterval,
            boolean retainOnCancellation, @Nullable String restorePath) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        env.enableCheckpointing(checkpointInterval.toMillis());
        if (retainOnCancellation) {
            env.getCheckpointConfig().setExternalizedCheckpointRetention(ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        }
        StatefulTestJob.build(env, spec).sinkTo(new FileResultSink(resultDir)).uid(StatefulTestJob.SINK_UID)
                .name("file-result-sink");
        JobGraph graph = env.getStreamGraph().getJobGraph();
        if (restorePath != null) {
            graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(restorePath, false));
        }
        return graph;
    }

    /**
     * {@link io.sr3.flink.testjob.ScheduledTestJob#build}: input arriving on {@code schedule} from
     * {@code originMillis} on, results to a {@link FileResultSink}; the graph carries no backend
     * or storage, like {@link #statefulJob}.
     */
    public static JobGraph scheduledJob(TestJobSpec spec, BurstSchedule schedule, long originMillis, int parallelism,
            Path resultDir, Duration checkpointInterval) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        env.enableCheckpointing(checkpointInterval.toMillis());
        ScheduledTestJob.build(env, spec, schedule, originMillis).sinkTo(new FileResultSink(resultDir))
                .uid(StatefulTestJob.SINK_UID).name("file-result-sink");
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * Two independent pipelines in one job graph, each {@link StatefulTestJob#build} with its own
     * uid suffix and its own {@link FileResultSink}: operators whose state sizes and rates differ,
     * both checked exactly with {@code expectedResults} of their spec.
     */
    public static JobGraph twoPipelineJob(Pipeline first, Pipeline second, int parallelism, Duration checkpointInterval) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        env.enableCheckpointing(checkpointInterval.toMillis());
        for (Pipeline pipeline : new Pipeline[] {first, second}) {
            StatefulTestJob.build(env, pipeline.spec(), pipeline.suffix())
                    .sinkTo(new FileResultSink(pipeline.resultDir())).uid(StatefulTestJob.SINK_UID + pipeline.suffix())
                    .name("file-result-sink" + pipeline.suffix());
        }
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * One pipeline of {@link #twoPipelineJob}.
     *
     * @param suffix appended to every uid and operator name of the pipeline, unique in the job
     * @param resultDir where its {@link FileResultSink} writes
     */
    public record Pipeline(TestJobSpec spec, String suffix, Path resultDir) {

        public Pipeline {
            Objects.requireNonNull(spec, "spec");
            Objects.requireNonNull(resultDir, "resultDir");
            if (suffix.isEmpty()) {
                throw new IllegalArgumentException("A pipeline of a two-pipeline job needs a uid suffix, run " + spec.runId());
            }
        }
    }
}
