package io.sr3.flink.harness;

import org.apache.flink.configuration.Configuration;

import java.time.Duration;

/**
 * The Flink configurations the demo and the benchmarks run with, spelled as configuration keys
 * (exactly what a user writes into a Flink config file; Flink 2.x has no API setter for backends).
 */
public final class FlinkSettings {

    private FlinkSettings() {}

    /**
     * Settings shared by every run: quick failure detection, fixed-delay restarts, a long
     * checkpoint statistics history (the result files list every checkpoint), and slots spread
     * over TaskManagers so that losing any TaskManager hits the job.
     */
    public static Configuration common(Duration checkpointInterval) {
        Configuration c = new Configuration();
        c.setString("execution.checkpointing.interval", checkpointInterval.toMillis() + " ms");
        c.setString("execution.checkpointing.mode", "EXACTLY_ONCE");
        c.setString("execution.checkpointing.incremental", "true");
        // A failed checkpoint (e.g. while a ring node goes away) must not by itself restart the job.
        c.setString("execution.checkpointing.tolerable-failed-checkpoints", "100");
        c.setString("restart-strategy.type", "fixed-delay");
        c.setString("restart-strategy.fixed-delay.attempts", "20");
        c.setString("restart-strategy.fixed-delay.delay", "200 ms");
        c.setString("heartbeat.interval", "1 s");
        c.setString("heartbeat.timeout", "5 s");
        c.setString("slot.request.timeout", "30 s");
        c.setString("taskmanager.load-balance.mode", "SLOTS");
        c.setString("web.checkpoints.history", "10000");
        return c;
    }

    /**
     * flink-sr3 with RocksDB working state: checkpoints on the in-JVM ring under {@code sr3:///<name>}.
     * The ring nodes themselves are started by {@link io.sr3.flink.node.TestingRing} from the same keys.
     */
    public static Configuration sr3(Configuration base, String checkpointDirectoryName, int replicationFactor) {
        Configuration c = new Configuration(base);
        c.setString("state.backend.type", "io.sr3.flink.Sr3StateBackendFactory");
        c.setString("execution.checkpointing.storage", "io.sr3.flink.Sr3CheckpointStorageFactory");
        c.setString("execution.checkpointing.dir", "sr3:///" + checkpointDirectoryName);
        c.setString("sr3.working-state", "rocksdb");
        c.setString("sr3.ring.replication-factor", Integer.toString(replicationFactor));
        c.setString("sr3.ring.failure-detector.timeout", "2 s");
        return c;
    }

    /** Flink's own RocksDB backend, incremental as {@link #common} sets it, checkpointing to a file:// or hdfs:// URI. */
    public static Configuration rocksDbOn(Configuration base, String checkpointDirectory) {
        Configuration c = new Configuration(base);
        c.setString("state.backend.type", "rocksdb");
        c.setString("execution.checkpointing.storage", "filesystem");
        c.setString("execution.checkpointing.dir", checkpointDirectory);
        return c;
    }
}
