package io.sr3.flink.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The configuration of each process of a {@link ProcessCluster}, as the keys a user writes into
 * Flink's {@code config.yaml}, and the files that carry it into a process directory:
 * {@code config.yaml} and a {@code log4j2.properties} that logs to a file there.
 *
 * <p>Settings that make failures visible within seconds: {@code heartbeat.interval} 1 s and
 * {@code heartbeat.timeout} 5 s (a SIGKILLed TaskManager is noticed after about two failed
 * heartbeat RPCs), fixed-delay restarts every 500 ms, REST caches refreshed every 200 ms so polling
 * sees changes, and the ring's failure detector probing every 250 ms with a 2 s timeout.
 */
final class ClusterConfigWriter {

    static final String LOCALHOST = "127.0.0.1";

    private final ClusterSpec spec;
    private final Path workDir;
    private final String jobManagerHost;
    private final int rpcPort;
    private final int restPort;

    ClusterConfigWriter(ClusterSpec spec, Path workDir, String jobManagerHost, int rpcPort, int restPort) {
        this.spec = spec;
        this.workDir = workDir;
        this.jobManagerHost = jobManagerHost;
        this.rpcPort = rpcPort;
        this.restPort = restPort;
    }

    /** Where the JobManager's RPC and REST endpoints listen. */
    String jobManagerHost() {
        return jobManagerHost;
    }

    int restPort() {
        return restPort;
    }

    /** The JobManager's keys; with sr3, a client-only ring node (it reads the ring, stores nothing). */
    Map<String, String> jobManager(List<String> seeds) {
        Map<String, String> config = common(seeds);
        config.put("jobmanager.bind-host", jobManagerHost);
        config.put("rest.bind-address", jobManagerHost);
        config.put("jobmanager.memory.process.size", "768m");
        if (spec.sr3()) {
            config.put("sr3.ring.role", "client");
            config.put("sr3.ring.host", jobManagerHost);
        }
        return config;
    }

    /** A TaskManager's keys: its address, small fixed memory pools, and with sr3 its ring port, zone and store. */
    Map<String, String> taskManager(List<String> seeds, String host, int ringPort, String zone, Path storeDirectory,
            Map<String, String> extraConfig) {
        Map<String, String> config = common(seeds);
        config.put("taskmanager.host", host);
        config.put("taskmanager.bind-host", host);
        config.put("taskmanager.numberOfTaskSlots", String.valueOf(spec.slotsPerTaskManager()));
        config.put("taskmanager.cpu.cores", "1");
        config.put("taskmanager.memory.framework.heap.size", "64m");
        config.put("taskmanager.memory.task.heap.size", "160m");
        config.put("taskmanager.memory.framework.off-heap.size", "96m");
        config.put("taskmanager.memory.task.off-heap.size", "0m");
        config.put("taskmanager.memory.network.min", "32m");
        config.put("taskmanager.memory.network.max", "32m");
        config.put("taskmanager.memory.managed.size", "96m");
        config.put("taskmanager.memory.jvm-metaspace.size", "192m");
        config.put("taskmanager.memory.jvm-overhead.min", "64m");
        config.put("taskmanager.memory.jvm-overhead.max", "64m");
        if (spec.sr3()) {
            config.put("sr3.ring.host", host);
            config.put("sr3.ring.port", String.valueOf(ringPort));
            config.put("sr3.store.dir", storeDirectory.toString());
            if (!zone.isEmpty()) {
                config.put("sr3.ring.zone", zone);
            }
        }
        config.putAll(extraConfig);
        return config;
    }

    private Map<String, String> common(List<String> seeds) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("jobmanager.rpc.address", jobManagerHost);
        config.put("jobmanager.rpc.port", String.valueOf(rpcPort));
        config.put("rest.address", jobManagerHost);
        config.put("rest.port", String.valueOf(restPort));
        config.put("heartbeat.interval", "1000");
        config.put("heartbeat.timeout", "5000");
        config.put("restart-strategy.type", "fixed-delay");
        config.put("restart-strategy.fixed-delay.attempts", String.valueOf(spec.restartAttempts()));
        config.put("restart-strategy.fixed-delay.delay", "500 ms");
        config.put("slot.request.timeout", "60000");
        config.put("web.refresh-interval", "200");
        config.put("rest.cache.checkpoint-statistics.timeout", "200 ms");
        config.put("execution.checkpointing.interval", spec.checkpointInterval().toMillis() + " ms");
        config.put("execution.checkpointing.num-retained", String.valueOf(spec.retainedCheckpoints()));
        config.put("execution.checkpointing.tolerable-failed-checkpoints", "1000");
        if (spec.sr3()) {
            config.put("state.backend.type", "io.sr3.flink.Sr3StateBackendFactory");
            config.put("execution.checkpointing.storage", "io.sr3.flink.Sr3CheckpointStorageFactory");
            config.put("execution.checkpointing.dir", "sr3:///flink-checkpoints");
            config.put("sr3.working-state", spec.workingState());
            config.put("sr3.ring.replication-factor", String.valueOf(spec.replicationFactor()));
            config.put("sr3.ring.seeds", String.join(";", seeds));
            config.put("sr3.ring.failure-detector.interval", "250 ms");
            config.put("sr3.ring.failure-detector.timeout", "2 s");
            config.put("sr3.repair.interval", "500 ms");
            config.put("sr3.repair.delay", "0 ms"); // tests kill on purpose and wait for the repair
        } else {
            config.put("state.backend.type", "rocksdb");
            config.put("execution.checkpointing.storage", "filesystem");
            config.put("execution.checkpointing.dir", fileCheckpoints().toUri().toString());
        }
        config.put("execution.checkpointing.incremental", "true");
        config.putAll(spec.extraConfig());
        return config;
    }

    /** Where the baseline (no sr3) keeps its {@code file://} checkpoints. */
    Path fileCheckpoints() {
        return workDir.resolve("file-checkpoints");
    }

    /** Writes {@code config.yaml} (values quoted) and {@code log4j2.properties} (logging to {@code logFile}) into {@code dir}. */
    static void write(Path dir, Map<String, String> config, Path logFile) throws IOException {
        StringBuilder yaml = new StringBuilder();
        config.forEach((k, v) -> yaml.append(k).append(": ").append(quote(v)).append('\n'));
        Files.writeString(dir.resolve("config.yaml"), yaml.toString());
        writeLogConfig(dir.resolve("log4j2.properties"), logFile);
    }

    /** A log4j2 configuration that writes INFO and above to {@code logFile} (Pekko at WARN). */
    static void writeLogConfig(Path file, Path logFile) throws IOException {
        Files.writeString(file, String.join("\n",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = FileAppender",
                "appender.file.name = FileAppender",
                "appender.file.type = File",
                "appender.file.fileName = " + logFile,
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p [%t] %c{1} - %m%n",
                "logger.pekko.name = org.apache.pekko", "logger.pekko.level = WARN", ""));
    }

    private static String quote(String value) {
        return "'" + value.replace("'", "''") + "'";
    }
}
