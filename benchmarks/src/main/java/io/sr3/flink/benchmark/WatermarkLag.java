package io.sr3.flink.benchmark;

import io.sr3.flink.cluster.ProcessCluster;
import io.sr3.flink.cluster.RecoveryProbe;
import io.sr3.flink.testjob.BurstSchedule;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import javax.annotation.concurrent.NotThreadSafe;

/**
 * How far the keyed operator of a job built by {@code ScheduledTestJob.build} is behind
 * its input, read over REST: its input watermark (the minimum over its subtasks) names the last
 * record it has processed (event time of record {@code i} is {@code i} ms, watermarks trail the
 * largest timestamp by 1 ms and follow the records in every channel), and the schedule says when
 * that record was due. Lag = now - due time of that record; 0 once every record is processed.
 *
 * <p>The resolution is about half a second: the source emits a watermark every 200 ms
 * ({@code pipeline.auto-watermark-interval}) and the JobManager refreshes task metrics every
 * {@link #FETCH_INTERVAL_MILLIS} ({@code metrics.fetcher.update-interval}, set by the benchmark).
 */
@NotThreadSafe
final class WatermarkLag implements RecoveryProbe.Lag {

    /** {@code metrics.fetcher.update-interval} the benchmark sets on the JobManager (Flink's default is 10 s). */
    static final long FETCH_INTERVAL_MILLIS = 200;

    private final ProcessCluster cluster;
    private final JobID job;
    private final String vertexId;
    private final BurstSchedule schedule;
    private final long originMillis;
    private long lastIndex = -1;

    WatermarkLag(ProcessCluster cluster, JobID job, String vertexNamePart, BurstSchedule schedule, long originMillis) {
        this.cluster = cluster;
        this.job = job;
        this.schedule = schedule;
        this.originMillis = originMillis;
        JsonNode json = cluster.getJson("/jobs/" + job);
        String id = null;
        if (json != null) {
            for (JsonNode vertex : json.path("vertices")) {
                if (vertex.path("name").asText().contains(vertexNamePart)) {
                    id = vertex.path("id").asText();
                }
            }
        }
        if (id == null) {
            throw new IllegalStateException("Job " + job + " has no vertex named like '" + vertexNamePart + "': " + json);
        }
        this.vertexId = id;
    }

    /** The index of the last record every subtask of the operator has processed, or -1 while unknown. */
    long processedIndex() {
        JsonNode json = cluster.getJson("/jobs/" + job + "/vertices/" + vertexId + "/watermarks");
        if (json == null || !json.isArray() || json.isEmpty()) {
            return -1;
        }
        long min = Long.MAX_VALUE;
        for (JsonNode metric : json) {
            if (!metric.path("id").asText().endsWith("currentInputWatermark")) {
                continue;
            }
            long watermark;
            try {
                watermark = Long.parseLong(metric.path("value").asText());
            } catch (NumberFormatException e) {
                return -1;
            }
            min = Math.min(min, watermark);
        }
        if (min == Long.MAX_VALUE || min < 0) {
            return -1; // no watermark yet (Long.MIN_VALUE) in some subtask
        }
        lastIndex = Math.min(min + 1, schedule.records() - 1);
        return lastIndex;
    }

    /** The last value {@link #processedIndex()} read, -1 if none. */
    long lastIndex() {
        return lastIndex;
    }

    @Override
    public long millis() {
        long index = processedIndex();
        if (index < 0) {
            return Long.MAX_VALUE;
        }
        if (index >= schedule.records() - 1) {
            return 0;
        }
        return Math.round(System.currentTimeMillis() - originMillis - schedule.dueOffsetMillis(index));
    }
}
