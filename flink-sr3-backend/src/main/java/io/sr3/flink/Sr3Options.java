package io.sr3.flink;

import io.sr3.flink.node.DurabilitySettings;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.ProcessRole;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingRole;
import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.restore.RestoreStrategy;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
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

/**
 * Every {@code sr3.*} configuration option, and their validation.
 *
 * <p>An unknown {@code sr3.*} key or a value that does not parse fails at job start with a message
 * naming the key and the value, because a typo in a storage setting must never be silently
 * replaced by a default.
 */
public final class Sr3Options {

    private Sr3Options() {}

    /** Keys whose value must not appear in an error message, even when misspelled. */
    private static final java.util.regex.Pattern LOOKS_SENSITIVE =
            java.util.regex.Pattern.compile("(?i)secr|pass|token|cred");

    public static final ConfigOption<WorkingState> WORKING_STATE =
            ConfigOptions.key("sr3.working-state")
                    .enumType(WorkingState.class)
                    .defaultValue(WorkingState.ROCKSDB)
                    .withDescription("Where the running job keeps keyed state between checkpoints: 'rocksdb' "
                            + "(embedded RocksDB, incremental checkpoints unless execution.checkpointing.incremental "
                            + "is false) or 'heap' (Flink's hashmap backend). Checkpoints go to the sr3 ring either way.");

    public static final ConfigOption<String> RING_HOST =
            ConfigOptions.key("sr3.ring.host")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Address this process's ring node listens on and tells peers. Default: "
                            + "taskmanager.host if set; otherwise 127.0.0.1 when sr3.ring.seeds is empty (one host) "
                            + "and this host's address when seeds are configured.");

    public static final ConfigOption<String> RING_PORT =
            ConfigOptions.key("sr3.ring.port")
                    .stringType()
                    .defaultValue("0")
                    .withDescription("Port of the ring node: a port, a range like '6130-6140' or a list like "
                            + "'6130,6131'; the first free one is used. 0 picks any free port, which is enough when "
                            + "all nodes run in one JVM; processes that join through sr3.ring.seeds need known ports.");

    public static final ConfigOption<List<String>> RING_SEEDS =
            ConfigOptions.key("sr3.ring.seeds")
                    .stringType()
                    .asList()
                    .defaultValues()
                    .withDescription("host:port of ring nodes in other processes to join through, separated by ';' or "
                            + "',', or a YAML list. A DNS name counts as every address it resolves to (a Kubernetes "
                            + "headless service names every ready pod), resolved again at every probe round (the JVM "
                            + "keeps DNS answers for networkaddress.cache.ttl, 30 s by default). The host is a name, "
                            + "an IPv4 address or an IPv6 address in brackets ([::1]:6130); the port is 1-65535. "
                            + "Nodes of the same JVM find each other without it.");

    public static final ConfigOption<Integer> REPLICATION_FACTOR =
            ConfigOptions.key("sr3.ring.replication-factor")
                    .intType()
                    .defaultValue(2)
                    .withDescription("Copies kept of every checkpoint block: the writer's own node first, then "
                            + "distinct ring successors, preferring other zones (sr3.ring.zone). Losing this many "
                            + "nodes at once can lose checkpoint data.");

    public static final ConfigOption<Integer> MIN_REPLICAS =
            ConfigOptions.key("sr3.ring.min-replicas")
                    .intType()
                    .noDefaultValue()
                    .withDescription("Distinct nodes that must acknowledge every block and manifest before a file "
                            + "is written; otherwise the file's close fails and Flink fails that checkpoint "
                            + "(execution.checkpointing.tolerable-failed-checkpoints decides the rest). Between 1 and "
                            + "sr3.ring.replication-factor. Default: the replication factor. A ring of one process "
                            + "(no sr3.ring.seeds, e.g. a MiniCluster) keeps as many copies as it has nodes.");

    public static final ConfigOption<String> RING_CLUSTER_ID =
            ConfigOptions.key("sr3.ring.cluster-id")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Name of the cluster this ring belongs to. A new store directory records it, "
                            + "and a node whose store directory records another cluster refuses to start, so two "
                            + "clusters' checkpoints never mix in one store. Default: kubernetes.cluster-id, else "
                            + "high-availability.cluster-id if set; no check without either.");

    public static final ConfigOption<String> RING_ZONE =
            ConfigOptions.key("sr3.ring.zone")
                    .stringType()
                    .defaultValue("")
                    .withDescription("Failure zone (rack, availability zone) of this node. Replicas of a block "
                            + "go to distinct zones first. Empty: every node is its own zone.");

    public static final ConfigOption<RingRole> RING_ROLE =
            ConfigOptions.key("sr3.ring.role")
                    .enumType(RingRole.class)
                    .noDefaultValue()
                    .withDescription("'storage': this process's ring node holds replicas. 'client': it reads and "
                            + "writes through the ring but stores nothing and never joins placement. Default: from "
                            + "the process: a JobManager or a command-line client (flink run) is a client, anything "
                            + "else (a TaskManager, a MiniCluster) stores. A storage node of a process configured "
                            + "with sr3.ring.seeds starts when Flink initializes its file systems, so it is a member "
                            + "before the first job runs.");

    public static final ConfigOption<Integer> RING_VIRTUAL_NODES =
            ConfigOptions.key("sr3.ring.virtual-nodes")
                    .intType()
                    .defaultValue(64)
                    .withDescription("Tokens per node on the consistent-hash ring; more spread data more evenly.");

    public static final ConfigOption<Duration> FAILURE_DETECTOR_INTERVAL =
            ConfigOptions.key("sr3.ring.failure-detector.interval")
                    .durationType()
                    .defaultValue(Duration.ofMillis(500))
                    .withDescription("How often each node probes every other node.");

    public static final ConfigOption<Duration> FAILURE_DETECTOR_TIMEOUT =
            ConfigOptions.key("sr3.ring.failure-detector.timeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(5))
                    .withDescription("How long a node may stay silent before it is removed from placement. "
                            + "Reads and writes skip an unreachable node at once; this only decides placement.");

    public static final ConfigOption<Duration> REPAIR_INTERVAL =
            ConfigOptions.key("sr3.repair.interval")
                    .durationType()
                    .defaultValue(NodeConfig.DEFAULT_REPAIR_INTERVAL)
                    .withDescription("How often a storage node checks, after the ring lost or gained a member, the "
                            + "manifests it holds for blocks with fewer live replicas than "
                            + "sr3.ring.replication-factor, and copies them from a surviving replica to new nodes. "
                            + "Scans repeat at this interval until one finds nothing to repair; one block is copied at "
                            + "a time.");

    public static final ConfigOption<Duration> REPAIR_DELAY =
            ConfigOptions.key("sr3.repair.delay")
                    .durationType()
                    .defaultValue(DurabilitySettings.DEFAULT_REPAIR_DELAY)
                    .withDescription("How long after a member was removed from the ring (see "
                            + "sr3.ring.failure-detector.timeout) its blocks are copied to other nodes. A node that "
                            + "returns within this time (a long GC pause, a restart) costs no copying; '0 ms' repairs "
                            + "at once.");

    public static final ConfigOption<Duration> REPAIR_CHECK_INTERVAL =
            ConfigOptions.key("sr3.repair.check-interval")
                    .durationType()
                    .defaultValue(DurabilitySettings.DEFAULT_REPAIR_CHECK_INTERVAL)
                    .withDescription("How often, even on a steady ring, the storage node that repairs a file asks "
                            + "every node its manifest names whether it still holds an intact copy of each block "
                            + "(from the block's header: present, length and CRC32C as the manifest records them; no "
                            + "block data is read or sent). A copy that is missing or damaged (deleted by hand, "
                            + "truncated, moved aside by the scrubber, see sr3.scrub.bandwidth) is re-created from an "
                            + "intact one as after a node loss (sr3.repair.interval), and the manifest lists the "
                            + "holders that really have it.");

    public static final ConfigOption<MemorySize> SCRUB_BANDWIDTH =
            ConfigOptions.key("sr3.scrub.bandwidth")
                    .memoryType()
                    .defaultValue(MemorySize.parse("4mb"))
                    .withDescription("Bytes per second each storage node reads to verify its own blocks (header and "
                            + "CRC32C of the data), one block after another. A block that fails is moved aside (to "
                            + ".corrupt-<key> in sr3.store.dir), logged and counted in corruptBlocksFound; it is never "
                            + "served again, and replica repair re-creates it within sr3.repair.check-interval. '0 b' "
                            + "turns the scrubber off.");

    public static final ConfigOption<Duration> SCRUB_INTERVAL =
            ConfigOptions.key("sr3.scrub.interval")
                    .durationType()
                    .defaultValue(DurabilitySettings.DEFAULT_SCRUB_INTERVAL)
                    .withDescription("How often a scrub pass over every block of a node's store starts, at most. A "
                            + "pass that takes longer at sr3.scrub.bandwidth (store size / bandwidth) is followed by "
                            + "the next one at once.");

    public static final ConfigOption<MemorySize> BLOCK_SIZE =
            ConfigOptions.key("sr3.block.size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("4mb"))
                    .withDescription("Size checkpoint files are cut into; each block is replicated and verified on "
                            + "its own. Must fit into sr3.transport.max-frame-size.");

    public static final ConfigOption<String> STORE_DIR =
            ConfigOptions.key("sr3.store.dir")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Directory of this node's blocks and of its persistent node id: a node that "
                            + "restarts with it, on any address, is the same member with the same blocks. Use a "
                            + "persistent disk, one per TaskManager. Default: with taskmanager.resource-id set, "
                            + "<process.taskmanager.working-dir, else the first io.tmp.dirs>/sr3-store-<resource-id> "
                            + "(beside Flink's own working directory, which Flink deletes on a clean shutdown); "
                            + "otherwise <java.io.tmpdir>/sr3-store/<host>_<port>, which a restart on another port "
                            + "does not find again.");

    public static final ConfigOption<Boolean> STORE_FSYNC =
            ConfigOptions.key("sr3.store.fsync")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Force every block to disk before acknowledging it. Off by default: "
                            + "durability comes from replicas on other nodes, like Flink's file:// checkpoints rely "
                            + "on the OS page cache.");

    public static final ConfigOption<MemorySize> STORE_MAX_SIZE =
            ConfigOptions.key("sr3.store.max-size")
                    .memoryType()
                    .noDefaultValue()
                    .withDescription("Most bytes this node's store may hold (block headers included). A block that "
                            + "would pass it is refused before anything is written and goes to the next node on the "
                            + "ring; when no node has room, the file, and so the checkpoint, fails with a message that "
                            + "names the full stores. Default: no limit.");

    public static final ConfigOption<Duration> ORPHAN_GRACE_PERIOD =
            ConfigOptions.key("sr3.store.orphan-grace-period")
                    .durationType()
                    .defaultValue(NodeConfig.DEFAULT_ORPHAN_GRACE_PERIOD)
                    .withDescription("Blocks that no manifest on the ring references (left by crashed writers, "
                            + "failed checkpoints, or deletes while a holder was down) are deleted once they are this "
                            + "old; each storage node checks at this interval. Must be longer than the longest time "
                            + "one checkpoint file takes to write (execution.checkpointing.timeout), because a "
                            + "file's blocks are stored before its manifest.");

    public static final ConfigOption<Duration> TOMBSTONE_RETENTION =
            ConfigOptions.key("sr3.store.tombstone-retention")
                    .durationType()
                    .defaultValue(DurabilitySettings.DEFAULT_TOMBSTONE_RETENTION)
                    .withDescription("How long the record that a file was deleted is kept (one small entry per "
                            + "deleted file and replica). It must outlast the longest time a node may be away with "
                            + "its disk: a node that returns later may bring back files deleted meanwhile (their "
                            + "blocks then stay until those files are deleted again).");

    public static final ConfigOption<String> TRANSPORT_SECRET =
            ConfigOptions.key("sr3.transport.secret")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Shared secret every ring node must know: a handshake in which both sides "
                            + "prove it (HMAC-SHA256 over fresh nonces of both; the secret never crosses the network) "
                            + "and a MAC on every frame after it. Needed across machines unless TLS is on (or "
                            + "sr3.transport.authentication is none); a ring of one process uses a random one.");

    public static final ConfigOption<MemorySize> MAX_FRAME_SIZE =
            ConfigOptions.key("sr3.transport.max-frame-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("16mb"))
                    .withDescription("Largest frame accepted from a peer; a larger one closes the connection before "
                            + "any of it is buffered.");

    public static final ConfigOption<Duration> REQUEST_TIMEOUT =
            ConfigOptions.key("sr3.transport.request-timeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription("Deadline of every request to a peer. A request that misses it is retried on "
                            + "another replica.");

    public static final ConfigOption<RestoreStrategy> RESTORE_STRATEGY =
            ConfigOptions.key("sr3.restore.strategy")
                    .enumType(RestoreStrategy.class)
                    .defaultValue(RestoreStrategy.AUTO)
                    .withDescription("How a restarted task gets its state from the ring: 'auto' lets the planner "
                            + "predict star, line and tree from measured links and pick the fastest; 'star', 'line' or "
                            + "'tree' force one (a structure that cannot run, like tree with one holder, falls back "
                            + "and the restore's log line says so).");

    public static final ConfigOption<Integer> RESTORE_TREE_FAN_IN =
            ConfigOptions.key("sr3.restore.tree-fan-in")
                    .intType()
                    .defaultValue(RestoreSettings.defaults().treeFanIn())
                    .withDescription("The most holders any node of a tree restore receives from at once, the "
                            + "recovering node included. Lower values protect a node's inbound link from incast.");

    public static final ConfigOption<Integer> RESTORE_MAX_CONCURRENT_FETCHES =
            ConfigOptions.key("sr3.restore.max-concurrent-fetches")
                    .intType()
                    .defaultValue(RestoreSettings.defaults().maxConcurrentFetches())
                    .withDescription("Blocks in flight at once towards a recovering node, over all holders. Each "
                            + "costs up to sr3.block.size of memory while it is in flight.");

    public static final ConfigOption<MemorySize> RESTORE_PREFETCH_MAX_SIZE =
            ConfigOptions.key("sr3.restore.prefetch-max-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse(RestoreSettings.DEFAULT_PREFETCH_MAX_BYTES + "b"))
                    .withDescription("With heap working state, a restoring subtask fetches its files through a "
                            + "restore plan into memory before Flink reads them; larger restores (and '0 b') skip "
                            + "the prefetch and read block by block. RocksDB working state restores through the "
                            + "plan straight into its local directory and ignores this limit.");

    /** All options, in the order the README lists them. */
    public static List<ConfigOption<?>> all() {
        List<ConfigOption<?>> all = new ArrayList<>(List.of(WORKING_STATE, RING_HOST, RING_PORT, RING_SEEDS,
                REPLICATION_FACTOR, MIN_REPLICAS, RING_CLUSTER_ID, RING_ZONE, RING_ROLE, RING_VIRTUAL_NODES, FAILURE_DETECTOR_INTERVAL,
                FAILURE_DETECTOR_TIMEOUT, REPAIR_INTERVAL, REPAIR_DELAY, REPAIR_CHECK_INTERVAL, SCRUB_BANDWIDTH,
                SCRUB_INTERVAL, BLOCK_SIZE, STORE_DIR, STORE_FSYNC, STORE_MAX_SIZE, ORPHAN_GRACE_PERIOD,
                TOMBSTONE_RETENTION, TRANSPORT_SECRET));
        all.addAll(Sr3SecurityOptions.all());
        all.addAll(List.of(MAX_FRAME_SIZE, REQUEST_TIMEOUT, RESTORE_STRATEGY, RESTORE_TREE_FAN_IN,
                RESTORE_MAX_CONCURRENT_FETCHES, RESTORE_PREFETCH_MAX_SIZE));
        all.addAll(Sr3PacingOptions.all());
        all.addAll(Sr3ReplicationOptions.all());
        return List.copyOf(all);
    }

    /** Whether the configuration sets any {@code sr3.*} key. */
    public static boolean hasSr3Keys(ReadableConfig config) {
        return config.toMap().keySet().stream().anyMatch(k -> k.startsWith("sr3."));
    }

    /**
     * Validates every {@code sr3.*} key and offers the result to this JVM's ring node. Cheap and
     * side-effect free apart from the offer: safe to call from Flink's factories.
     */
    public static NodeConfig offerToLocalRing(ReadableConfig config) {
        NodeConfig nodeConfig = nodeConfig(config);
        if (hasSr3Keys(config)) {
            LocalRing.offerConfig(nodeConfig);
        }
        return nodeConfig;
    }

    /**
     * Parses and validates the ring node configuration.
     *
     * @throws IllegalConfigurationException naming the key and value of the first bad option
     */
    public static NodeConfig nodeConfig(ReadableConfig config) {
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
                new RestoreSettings(strategy.forced(), fanIn, fetches, prefetch.getBytes()),
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
