package io.sr3.flink;

import io.sr3.flink.node.DurabilitySettings;
import io.sr3.flink.node.ProcessRole;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingRole;
import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.restore.RestoreStrategy;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.TaskManagerOptions;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static io.sr3.flink.Sr3Options.*;

/**
 * Reads the ring node's configuration from Flink's: every {@code sr3.*} key checked (unknown keys
 * refused), every value parsed and validated, errors naming the key and the value (masked for
 * keys that look secret).
 */
final class NodeConfigReader {

    /** Keys whose value must not appear in an error message, even when misspelled. */
    private static final java.util.regex.Pattern LOOKS_SENSITIVE =
            java.util.regex.Pattern.compile("(?i)secr|pass|token|cred");

    private NodeConfigReader() {}

    /** See {@link Sr3Options#nodeConfig}. */
    static NodeConfig read(ReadableConfig config) {
        rejectUnknownKeys(config);
        Map<String, String> raw = config.toMap();
        WorkingState ignored = get(config, raw, WORKING_STATE);
        List<String> seeds;
        try {
            seeds = RingSeeds.parse(get(config, raw, RING_SEEDS));
        } catch (IllegalArgumentException e) {
            throw invalid(RING_SEEDS, raw, e.getMessage());
        }
        List<Integer> ports = parsePorts(get(config, raw, RING_PORT), raw);
        int replication = get(config, raw, REPLICATION_FACTOR);
        check(replication >= 1 && replication <= 16, REPLICATION_FACTOR, raw, "must be between 1 and 16");
        int minReplicas = replication;
        if (raw.containsKey(MIN_REPLICAS.key())) {
            minReplicas = get(config, raw, MIN_REPLICAS);
            check(minReplicas >= 1 && minReplicas <= replication, MIN_REPLICAS, raw,
                    "must be between 1 and sr3.ring.replication-factor (" + replication + ")");
        }
        int virtualNodes = get(config, raw, RING_VIRTUAL_NODES);
        check(virtualNodes >= 1 && virtualNodes <= 4096, RING_VIRTUAL_NODES, raw, "must be between 1 and 4096");
        Duration interval = get(config, raw, FAILURE_DETECTOR_INTERVAL);
        check(isPositive(interval), FAILURE_DETECTOR_INTERVAL, raw, "must be a positive duration");
        Duration timeout = get(config, raw, FAILURE_DETECTOR_TIMEOUT);
        check(isPositive(timeout) && timeout.compareTo(interval) > 0, FAILURE_DETECTOR_TIMEOUT, raw,
                "must be longer than sr3.ring.failure-detector.interval (" + interval.toMillis() + " ms)");
        Duration requestTimeout = get(config, raw, REQUEST_TIMEOUT);
        check(isPositive(requestTimeout), REQUEST_TIMEOUT, raw, "must be a positive duration");
        MemorySize maxFrame = get(config, raw, MAX_FRAME_SIZE);
        check(maxFrame.getBytes() >= 64 * 1024 && maxFrame.getBytes() <= Integer.MAX_VALUE / 2, MAX_FRAME_SIZE, raw,
                "must be between 64 kb and 1 gb");
        MemorySize blockSize = get(config, raw, BLOCK_SIZE);
        check(blockSize.getBytes() >= 1024 && blockSize.getBytes() + NodeConfig.BLOCK_FRAME_OVERHEAD <= maxFrame.getBytes(),
                BLOCK_SIZE, raw, "must be at least 1 kb and fit into sr3.transport.max-frame-size (" + maxFrame + ")");
        Duration repairInterval = get(config, raw, REPAIR_INTERVAL);
        check(isPositive(repairInterval), REPAIR_INTERVAL, raw, "must be a positive duration");
        RingRole role = raw.containsKey(RING_ROLE.key()) ? get(config, raw, RING_ROLE) : ProcessRole.detect().ringRole();
        Duration repairDelay = get(config, raw, REPAIR_DELAY);
        check(repairDelay != null && !repairDelay.isNegative(), REPAIR_DELAY, raw, "must not be negative");
        Duration tombstoneRetention = get(config, raw, TOMBSTONE_RETENTION);
        check(isPositive(tombstoneRetention), TOMBSTONE_RETENTION, raw, "must be a positive duration");
        Duration repairCheckInterval = get(config, raw, REPAIR_CHECK_INTERVAL);
        check(isPositive(repairCheckInterval), REPAIR_CHECK_INTERVAL, raw, "must be a positive duration");
        MemorySize scrubBandwidth = get(config, raw, SCRUB_BANDWIDTH);
        Duration scrubInterval = get(config, raw, SCRUB_INTERVAL);
        check(isPositive(scrubInterval), SCRUB_INTERVAL, raw, "must be a positive duration");
        long storeMaxBytes = Long.MAX_VALUE;
        if (config.getOptional(STORE_MAX_SIZE).isPresent() || raw.containsKey(STORE_MAX_SIZE.key())) {
            MemorySize max = get(config, raw, STORE_MAX_SIZE);
            check(max != null && max.getBytes() >= blockSize.getBytes() + 17, STORE_MAX_SIZE, raw,
                    "must hold at least one block of sr3.block.size (" + blockSize + ")");
            storeMaxBytes = max.getBytes();
        }
        Duration orphanGrace = get(config, raw, ORPHAN_GRACE_PERIOD);
        check(isPositive(orphanGrace), ORPHAN_GRACE_PERIOD, raw, "must be a positive duration");
        RestoreStrategy strategy = get(config, raw, RESTORE_STRATEGY);
        int fanIn = get(config, raw, RESTORE_TREE_FAN_IN);
        check(fanIn >= 2 && fanIn <= 64, RESTORE_TREE_FAN_IN, raw, "must be between 2 and 64");
        int fetches = get(config, raw, RESTORE_MAX_CONCURRENT_FETCHES);
        check(fetches >= 1 && fetches <= 256, RESTORE_MAX_CONCURRENT_FETCHES, raw, "must be between 1 and 256");
        MemorySize prefetch = get(config, raw, RESTORE_PREFETCH_MAX_SIZE);
        Duration probeInterval = get(config, raw, RESTORE_PROBE_INTERVAL);
        check(!probeInterval.isNegative(), RESTORE_PROBE_INTERVAL, raw, "must not be negative");
        String secret = config.getOptional(TRANSPORT_SECRET).orElse(null);
        String storeDir = config.getOptional(STORE_DIR).orElse(defaultStoreDirectory(config));
        return new NodeConfig(
                host(config, seeds),
                ports,
                seeds,
                replication,
                get(config, raw, RING_ZONE),
                virtualNodes,
                storeDir == null ? null : Paths.get(storeDir),
                get(config, raw, STORE_FSYNC),
                Sr3SecurityOptions.security(config, raw, secret, seeds),
                Sr3SecurityOptions.limits(config, raw),
                (int) maxFrame.getBytes(),
                requestTimeout,
                interval,
                timeout,
                (int) blockSize.getBytes(),
                role,
                repairInterval,
                storeMaxBytes,
                orphanGrace,
                new RestoreSettings(strategy.forced(), fanIn, fetches, prefetch.getBytes(), probeInterval),
                new DurabilitySettings(minReplicas, repairDelay, tombstoneRetention, clusterId(config, raw),
                        repairCheckInterval, scrubBandwidth.getBytes(), scrubInterval));
    }

    /**
     * The store directory of a TaskManager with a fixed {@code taskmanager.resource-id}: stable
     * across restarts, like Flink's working directory (FLIP-198) but beside it, since Flink deletes
     * its working directory when the TaskManager shuts down cleanly. Null without a resource id.
     */
    @javax.annotation.Nullable
    static String defaultStoreDirectory(ReadableConfig config) {
        String resourceId = config.getOptional(TaskManagerOptions.TASK_MANAGER_RESOURCE_ID).orElse(null);
        if (resourceId == null || resourceId.isBlank()) {
            return null;
        }
        String base = config.getOptional(ClusterOptions.TASK_MANAGER_PROCESS_WORKING_DIR_BASE).orElse(null);
        if (base == null) {
            String tmpDirs = config.getOptional(CoreOptions.TMP_DIRS).orElse(System.getProperty("java.io.tmpdir"));
            base = tmpDirs.split("[," + java.util.regex.Pattern.quote(java.io.File.pathSeparator) + "]")[0];
        }
        return Paths.get(base, "sr3-store-" + resourceId.replaceAll("[^A-Za-z0-9._-]", "_")).toString();
    }

    /** {@code sr3.ring.cluster-id}, else the deployment's own cluster id if one is set; null for none. */
    @javax.annotation.Nullable
    private static String clusterId(ReadableConfig config, Map<String, String> raw) {
        String id = config.getOptional(RING_CLUSTER_ID).orElse(null);
        if (id == null) {
            id = raw.get("kubernetes.cluster-id");
        }
        if (id == null) {
            id = raw.get("high-availability.cluster-id");
        }
        if (id == null) {
            return null;
        }
        check(!id.isBlank() && id.trim().matches("\\S+"), RING_CLUSTER_ID, raw, "must be non-empty and without whitespace");
        return id.trim();
    }

    private static String host(ReadableConfig config, List<String> seeds) {
        String host = config.getOptional(RING_HOST).orElse(config.getOptional(TaskManagerOptions.HOST).orElse(null));
        if (host != null) {
            return host;
        }
        if (seeds.isEmpty()) {
            return "127.0.0.1";
        }
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalConfigurationException("Could not determine this host's address for the sr3 ring; set "
                    + RING_HOST.key(), e);
        }
    }

    static List<Integer> parsePorts(String spec, Map<String, String> raw) {
        List<Integer> ports = new ArrayList<>();
        try {
            for (String part : spec.split(",")) {
                String p = part.trim();
                int dash = p.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash).trim());
                int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1).trim());
                check(from >= 0 && to <= 65535 && from <= to && to - from < 10_000, RING_PORT, raw,
                        "ports must be in 0..65535 and ranges ascending");
                for (int port = from; port <= to; port++) {
                    ports.add(port);
                }
            }
        } catch (NumberFormatException e) {
            throw invalid(RING_PORT, raw, "expected a port, a range like 6130-6140 or a comma-separated list");
        }
        return ports;
    }

    private static void rejectUnknownKeys(ReadableConfig config) {
        Set<String> known = new TreeSet<>();
        for (ConfigOption<?> option : all()) {
            known.add(option.key());
        }
        for (Map.Entry<String, String> entry : config.toMap().entrySet()) {
            if (entry.getKey().startsWith("sr3.") && !known.contains(entry.getKey())) {
                throw new IllegalConfigurationException(String.format(
                        "Unknown flink-sr3 option '%s' (value '%s'). Known options: %s",
                        entry.getKey(), LOOKS_SENSITIVE.matcher(entry.getKey()).find() ? "******" : entry.getValue(), known));
            }
        }
    }

    static <T> T get(ReadableConfig config, Map<String, String> raw, ConfigOption<T> option) {
        try {
            return config.get(option);
        } catch (IllegalArgumentException e) {
            throw invalid(option, raw, describeType(option));
        }
    }

    /** What a value of this option's type looks like, for the error message. */
    private static String describeType(ConfigOption<?> option) {
        Object example = option == RING_ROLE ? RingRole.STORAGE : option.defaultValue();
        if (example instanceof Enum<?> e) {
            return "expected one of " + Arrays.toString(e.getDeclaringClass().getEnumConstants()).toLowerCase();
        } else if (example instanceof Duration) {
            return "expected a duration like '500 ms' or '10 s'";
        } else if (example instanceof MemorySize) {
            return "expected a size like '4 mb'";
        } else if (example instanceof Integer) {
            return "expected an integer";
        } else if (example instanceof Boolean) {
            return "expected true or false";
        } else if (option == RING_SEEDS) {
            return "expected host:port entries separated by ';' or ',' (quote an entry with '...' only as a whole)";
        }
        return "could not be parsed";
    }

    static void check(boolean condition, ConfigOption<?> option, Map<String, String> raw, String rule) {
        if (!condition) {
            throw invalid(option, raw, rule);
        }
    }

    private static IllegalConfigurationException invalid(ConfigOption<?> option, Map<String, String> raw, String rule) {
        String value = LOOKS_SENSITIVE.matcher(option.key()).find()
                ? "******"
                : raw.getOrDefault(option.key(), String.valueOf(option.defaultValue())).replaceAll("\\p{Cntrl}", "?");
        return new IllegalConfigurationException(String.format("Invalid value '%s' for flink-sr3 option '%s': %s",
                value, option.key(), rule));
    }

    static boolean isPositive(Duration d) {
        return d != null && !d.isZero() && !d.isNegative();
    }
}
