package io.sr3.flink.it;

import io.sr3.flink.RestJobEndpoint;
import io.sr3.flink.pacing.JobView;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testing.EmbeddedCluster;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pacer's view of a real job through a real MiniCluster's REST API: Flink's own count of the
 * job's restarts, which the pacer takes restarts from, and the running attempt's counters.
 */
class RestJobEndpointITCase {

    /** Failures of the job's map before it keeps running. */
    static final int FAILURES = 2;
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path tempDir;

    private EmbeddedCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        Configuration config = new Configuration();
        config.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofMillis(200));
        config.set(WebOptions.REFRESH_INTERVAL, Duration.ofMillis(200));
        cluster = EmbeddedCluster.start(config, 1, 1, tempDir);
    }

    @AfterEach
    void stopCluster() throws Exception {
        cluster.close();
    }

    /**
     * A job whose map fails in its first {@link #FAILURES} attempts and then keeps running: once
     * the running job's source has emitted records, the endpoint reads Flink's restart count at
     * exactly that.
     */
    @Test
    void readsFlinksRestartCountOfTheJob() throws Exception {
        Configuration job = new Configuration();
        job.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        job.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, FAILURES + 1);
        job.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(job);
        env.setParallelism(1);
        env.disableOperatorChaining();
        env.fromSequence(0, Long.MAX_VALUE).map(new FailingInEarlyAttempts()).sinkTo(new DiscardingSink<>());
        JobID jobId = cluster.submit(env.getStreamGraph().getJobGraph());
        RestJobEndpoint endpoint = new RestJobEndpoint(URI.create(cluster.restUrl()), jobId.toString(),
                Duration.ofSeconds(5));

        JobView view = pollUntil(endpoint, v -> v.restartCount() >= FAILURES && v.counters() != null
                && v.counters().sourceRecords() > 0);

        assertThat(view.restartCount()).as("Flink's count of restarts").isEqualTo(FAILURES);
        assertThat(view.state()).isEqualTo("RUNNING");
    }

    /**
     * Polls until {@code done}. A poll the REST API fails (HTTP 500 while the job is still
     * initializing) is retried, as the pacer does at its next decision.
     */
    private static JobView pollUntil(RestJobEndpoint endpoint, java.util.function.Predicate<JobView> done) {
        Object[] last = {"none"};
        Deadline.in(TIMEOUT).pollEvery(Duration.ofMillis(100), "the REST view of the job to match", () -> {
            try {
                JobView view = endpoint.poll();
                last[0] = view;
                return done.test(view);
            } catch (IOException e) {
                last[0] = e;
                return false;
            }
        }, () -> "last poll: " + last[0]);
        return (JobView) last[0];
    }

    /** Throws after a few records in each of the task's first {@link #FAILURES} attempts. */
    private static final class FailingInEarlyAttempts extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;
        private long seen;

        @Override
        public Long map(Long value) {
            if (++seen > 1_000 && getRuntimeContext().getTaskInfo().getAttemptNumber() < FAILURES) {
                throw new IllegalStateException("Failure injected by the test in attempt "
                        + getRuntimeContext().getTaskInfo().getAttemptNumber());
            }
            return value;
        }
    }
}
