package io.sr3.flink.benchmark;

import io.sr3.flink.harness.JobProbe.CheckpointRecord;
import io.sr3.flink.harness.Stats;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The raw numbers of one run (one backend, one round) of {@link BackendComparisonBenchmark}.
 *
 * @param backend {@link BackendComparisonBenchmark.Backend} name
 * @param round 1-based round; runs alternate backends within and across rounds
 * @param throughputRecords records of the rate-unlimited phase
 * @param throughputMillis from the last subtask RUNNING to the job FINISHED in that phase
 * @param throughputCheckpoints checkpoints completed during the rate-unlimited phase
 * @param fullStateCheckpoints checkpoints of the rate-limited phase triggered after every key's
 *     state existed and before the injected failure: the checkpoint-duration sample
 * @param restoredCheckpointId the checkpoint the failover restored, -1 if none
 * @param restoredStateSize its state size in bytes
 * @param failureToRunningMillis from the injected failure to the last subtask RUNNING again
 * @param longestTaskRestoreMillis the longest INITIALIZING phase (state download and RocksDB open) of a subtask
 * @param failureToFirstCheckpointMillis from the failure to the completion of the first checkpoint after the restore
 * @param resultsExact whether both phases delivered exactly the expected per-key results
 * @param ringBytesPerNode for flink-sr3: bytes in each ring node's store at the failure (empty otherwise)
 * @param ringBytesWritten for flink-sr3: bytes sent to the ring as block writes (all replicas), whole run
 * @param checkpointingCpuNanos CPU time of the whole JVM (job, storage, kernel time, garbage
 *     collector) in the rate-limited phase from all subtasks RUNNING to the injected failure
 * @param checkpointingBytes bytes uploaded (checkpointed size) by the checkpoints completed in that window
 */
public record RunResult(
        String backend,
        int round,
        long throughputRecords,
        long throughputMillis,
        List<CheckpointRecord> throughputCheckpoints,
        List<CheckpointRecord> fullStateCheckpoints,
        long restoredCheckpointId,
        long restoredStateSize,
        long failureToRunningMillis,
        long longestTaskRestoreMillis,
        long failureToFirstCheckpointMillis,
        boolean resultsExact,
        long[] ringBytesPerNode,
        long ringBytesWritten,
        long checkpointingCpuNanos,
        long checkpointingBytes) {

    /**
     * CPU-seconds per GiB checkpointed in the rate-limited phase. The job's own work is the same
     * for every backend there, so differences between backends are what their checkpoints cost.
     */
    public double cpuSecondsPerCheckpointedGiB() {
        return checkpointingCpuNanos / 1e9 / (checkpointingBytes / (double) (1L << 30));
    }

    public double recordsPerSecond() {
        return throughputRecords * 1000.0 / throughputMillis;
    }

    public Stats checkpointDurations() {
        return Stats.of(fullStateCheckpoints.stream().map(CheckpointRecord::endToEndMillis).toList());
    }

    public Stats checkpointStateSizes() {
        return Stats.of(fullStateCheckpoints.stream().map(CheckpointRecord::stateSize).toList());
    }

    public Stats checkpointedSizes() {
        return Stats.of(fullStateCheckpoints.stream().map(CheckpointRecord::checkpointedSize).toList());
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("backend", backend);
        m.put("round", round);
        m.put("resultsExact", resultsExact);
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("records", throughputRecords);
        t.put("millis", throughputMillis);
        t.put("recordsPerSecond", recordsPerSecond());
        t.put("checkpoints", checkpoints(throughputCheckpoints));
        m.put("throughput", t);
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("count", fullStateCheckpoints.size());
        c.put("endToEndMillisMean", checkpointDurations().mean());
        c.put("endToEndMillisMedian", checkpointDurations().median());
        c.put("endToEndMillisP99", checkpointDurations().p99());
        c.put("cpuNanos", checkpointingCpuNanos);
        c.put("checkpointedBytes", checkpointingBytes);
        c.put("cpuSecondsPerCheckpointedGiB", cpuSecondsPerCheckpointedGiB());
        c.put("stateSizeBytesMedian", checkpointStateSizes().median());
        c.put("checkpointedSizeBytesMean", checkpointedSizes().mean());
        c.put("checkpoints", checkpoints(fullStateCheckpoints));
        m.put("checkpointing", c);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("restoredCheckpointId", restoredCheckpointId);
        r.put("restoredStateSizeBytes", restoredStateSize);
        r.put("failureToRunningMillis", failureToRunningMillis);
        r.put("longestTaskRestoreMillis", longestTaskRestoreMillis);
        r.put("failureToFirstCheckpointMillis", failureToFirstCheckpointMillis);
        m.put("restore", r);
        if (ringBytesPerNode.length > 0) {
            Map<String, Object> ring = new LinkedHashMap<>();
            ring.put("bytesPerNodeAtFailure", ringBytesPerNode);
            ring.put("bytesWritten", ringBytesWritten);
            m.put("ring", ring);
        }
        return m;
    }

    private static List<Map<String, Object>> checkpoints(List<CheckpointRecord> records) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (CheckpointRecord c : records) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", c.id());
            m.put("endToEndMillis", c.endToEndMillis());
            m.put("stateSizeBytes", c.stateSize());
            m.put("checkpointedSizeBytes", c.checkpointedSize());
            list.add(m);
        }
        return list;
    }
}
