package io.sr3.flink.testjob;

import javax.annotation.concurrent.ThreadSafe;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When each record was processed and with which end-to-end latency, so that a report can leave
 * out time windows known only afterwards (from a failure to the moment the job caught up), or
 * count each record once although a restart replayed it. Three longs per processed record: a few
 * MB for the benchmark's runs.
 */
@ThreadSafe
public final class ProcessingLog {

    private long[] processedAt = new long[1 << 14];
    private long[] latencies = new long[1 << 14];
    private long[] indices = new long[1 << 14];
    private int size;

    synchronized void record(long atMillis, long latencyMillis, long recordIndex) {
        if (size == processedAt.length) {
            processedAt = Arrays.copyOf(processedAt, size * 2);
            latencies = Arrays.copyOf(latencies, size * 2);
            indices = Arrays.copyOf(indices, size * 2);
        }
        processedAt[size] = atMillis;
        latencies[size] = latencyMillis;
        indices[size] = recordIndex;
        size++;
    }

    /**
     * The processings of the records due at or after {@code epochMillis} (due time = processing
     * time minus latency): a run without its warm-up.
     */
    public synchronized ProcessingLog dueFrom(long epochMillis) {
        ProcessingLog out = new ProcessingLog();
        for (int i = 0; i < size; i++) {
            if (processedAt[i] - latencies[i] >= epochMillis) {
                out.record(processedAt[i], latencies[i], indices[i]);
            }
        }
        return out;
    }

    /** The latency of every processing, replays included. */
    public synchronized LatencyHistogram all() {
        LatencyHistogram out = new LatencyHistogram();
        for (int i = 0; i < size; i++) {
            out.record(latencies[i]);
        }
        return out;
    }

    /**
     * When the job's output caught up after a failure: the latest processing, after
     * {@code failureMillis} and before {@code beforeMillis}, of a record due at or before
     * {@code sourceCaughtUpMillis}, the moment the restarted source was back on schedule. Records
     * the source emitted before that moment may still wait in the job's buffers; their results
     * are out only now. {@code sourceCaughtUpMillis} if none is processed later.
     */
    public synchronized long outputCaughtUp(long failureMillis, long sourceCaughtUpMillis, long beforeMillis) {
        long caughtUp = sourceCaughtUpMillis;
        for (int i = 0; i < size; i++) {
            if (processedAt[i] > failureMillis && processedAt[i] < beforeMillis
                    && processedAt[i] - latencies[i] <= sourceCaughtUpMillis) {
                caughtUp = Math.max(caughtUp, processedAt[i]);
            }
        }
        return caughtUp;
    }

    /**
     * The latency of each record's first processing, one value per record: what a consumer
     * downstream of an at-least-once sink sees, since a replay after a restart only repeats a
     * result that was already out. A record that was due while the job was down counts with the
     * time it waited for the recovery.
     */
    public synchronized LatencyHistogram firstProcessing() {
        Map<Long, Long> first = new HashMap<>();
        for (int i = 0; i < size; i++) {
            first.merge(indices[i], latencies[i], Math::min); // same due time: the lowest latency is the first
        }
        LatencyHistogram out = new LatencyHistogram();
        first.values().forEach(out::record);
        return out;
    }

    /**
     * Latencies of the records processed outside every {@code [from, to]} window (epoch millis).
     */
    public synchronized LatencyHistogram outside(List<long[]> windows) {
        LatencyHistogram out = new LatencyHistogram();
        for (int i = 0; i < size; i++) {
            if (!inAny(processedAt[i], windows)) {
                out.record(latencies[i]);
            }
        }
        return out;
    }

    /**
     * Latencies of the records processed outside every {@code [from, to]} window whose due time
     * (processing time minus latency) falls into one of the {@code [from, to)} {@code periods}
     * (epoch millis), such as the bursts of a schedule.
     */
    public synchronized LatencyHistogram dueWithin(List<long[]> periods, List<long[]> windows) {
        LatencyHistogram out = new LatencyHistogram();
        for (int i = 0; i < size; i++) {
            long due = processedAt[i] - latencies[i];
            for (long[] p : periods) {
                if (due >= p[0] && due < p[1]) {
                    if (!inAny(processedAt[i], windows)) {
                        out.record(latencies[i]);
                    }
                    break;
                }
            }
        }
        return out;
    }

    private static boolean inAny(long at, List<long[]> windows) {
        for (long[] w : windows) {
            if (at >= w[0] && at <= w[1]) {
                return true;
            }
        }
        return false;
    }
}
