package io.sr3.flink;

import io.sr3.flink.node.DurabilitySettings;
import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingRole;
import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.restore.RestoreStrategy;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Every {@code sr3.*} configuration option of the ring node (pacing, security and replication have
 * their own classes), and the entry points that validate them ({@link NodeConfigReader}).
 *
 * <p>An unknown {@code sr3.*} key or a value that does not parse fails at job start with a message
 * naming the key and the value, because a typo in a storage setting must never be silently
 * replaced by a default.
 */
public final class Sr3Options {

    private Sr3Options() {}

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
                            + "and every frame after it encrypted and authenticated (AES-256-GCM under a key of the "
                            + "connection). Needed across machines unless TLS is on (or "
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

    public static final ConfigOption<Duration> RESTORE_PROBE_INTERVAL =
            ConfigOptions.key("sr3.restore.probe-interval")
                    .durationType()
                    .defaultValue(Duration.ZERO)
                    .withDescription("How often a storage node measures the link from one of its peers (the one "
                            + "measured longest ago, or never) with a few probe blocks of at most 1 MiB, so that "
                            + "restore plans start from measured links where no transfer has measured them yet. "
                            + "Each probe moves about 8 probe blocks; once every link was measured, the next one "
                            + "measures the node's inbound port with 1 to 4 peers sending at once (about 128 probe "
                            + "blocks), which is what lets 'auto' choose a tree where many senders overload the port. "
                            + "'0 ms' (the default) probes never, and links are then learned from reads, writes and "
                            + "restores only, the inbound port never.");

    /** All options, in the order the README lists them. */
    public static List<ConfigOption<?>> all() {
        List<ConfigOption<?>> all = new ArrayList<>(List.of(WORKING_STATE, RING_HOST, RING_PORT, RING_SEEDS,
                REPLICATION_FACTOR, MIN_REPLICAS, RING_CLUSTER_ID, RING_ZONE, RING_ROLE, RING_VIRTUAL_NODES, FAILURE_DETECTOR_INTERVAL,
                FAILURE_DETECTOR_TIMEOUT, REPAIR_INTERVAL, REPAIR_DELAY, REPAIR_CHECK_INTERVAL, SCRUB_BANDWIDTH,
                SCRUB_INTERVAL, BLOCK_SIZE, STORE_DIR, STORE_FSYNC, STORE_MAX_SIZE, ORPHAN_GRACE_PERIOD,
                TOMBSTONE_RETENTION, TRANSPORT_SECRET));
        all.addAll(Sr3SecurityOptions.all());
        all.addAll(List.of(MAX_FRAME_SIZE, REQUEST_TIMEOUT, RESTORE_STRATEGY, RESTORE_TREE_FAN_IN,
                RESTORE_MAX_CONCURRENT_FETCHES, RESTORE_PREFETCH_MAX_SIZE, RESTORE_PROBE_INTERVAL));
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
        return NodeConfigReader.read(config);
    }
}
