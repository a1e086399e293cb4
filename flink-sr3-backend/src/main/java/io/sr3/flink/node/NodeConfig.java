package io.sr3.flink.node;

import io.sr3.flink.transport.TransportLimits;
import io.sr3.flink.transport.TransportSecurity;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything a ring node needs to run, already validated (see {@code Sr3Options} for the keys,
 * defaults and descriptions).
 *
 * @param host the address this node listens on and advertises
 * @param ports candidate listen ports, tried in order; {@code [0]} means an ephemeral port
 * @param seeds {@code host:port} of nodes in other processes to join through
 * @param replicationFactor copies kept of every block and manifest
 * @param zone this node's failure zone, empty if none
 * @param virtualNodes tokens per member on the hash ring
 * @param storeDirectory where blocks live; null for the default under the temp directory
 * @param fsync whether blocks are forced to disk before they are acknowledged
 * @param security how ring connections are protected (TLS, the shared secret); printed without secrets
 * @param limits what the ring server spends on its peers at most
 * @param maxFrameSize the largest frame accepted from a peer
 * @param requestTimeout the deadline of every remote request
 * @param pingInterval how often the failure detector probes each member
 * @param failureTimeout how long a member may stay silent before it leaves placement
 * @param blockSize the size files are cut into
 * @param role whether this node holds replicas or only reads and writes through the ring
 * @param repairInterval how often a storage node looks for blocks that fell under the
 *     replication factor after a membership change
 * @param storeMaxBytes the most bytes this node's store may hold; {@code Long.MAX_VALUE} for no limit
 * @param orphanGracePeriod how old a block no manifest references must be before it is deleted
 * @param restore how this node restores state through the ring ({@code sr3.restore.*})
 * @param durability the write quorum and the delays of repair and tombstone cleanup
 */
public record NodeConfig(
        String host,
        List<Integer> ports,
        List<String> seeds,
        int replicationFactor,
        String zone,
        int virtualNodes,
        @Nullable Path storeDirectory,
        boolean fsync,
        TransportSecurity security,
        TransportLimits limits,
        int maxFrameSize,
        Duration requestTimeout,
        Duration pingInterval,
        Duration failureTimeout,
        int blockSize,
        RingRole role,
        Duration repairInterval,
        long storeMaxBytes,
        Duration orphanGracePeriod,
        RestoreSettings restore,
        DurabilitySettings durability) {

    /** The shared secret, or null: part of {@link #security()}. */
    @Nullable
    public String secret() {
        return security.secret();
    }

    /** A copy with other transport security and limits. */
    public NodeConfig withTransport(TransportSecurity newSecurity, TransportLimits newLimits) {
        return new NodeConfig(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync, newSecurity,
                newLimits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, role, repairInterval,
                storeMaxBytes, orphanGracePeriod, restore, durability);
    }

    /** Bytes a block frame adds around the block: frame header, the PUT key prefix, a sealed frame's checksum and tag. */
    public static final int BLOCK_FRAME_OVERHEAD = 1024;

    public NodeConfig {
        Objects.requireNonNull(host, "host");
        ports = List.copyOf(ports);
        seeds = List.copyOf(seeds);
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(security, "security");
        Objects.requireNonNull(limits, "limits");
        if (ports.isEmpty()) {
            throw new IllegalArgumentException("At least one port (or 0) is required");
        }
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("replicationFactor must be >= 1, was " + replicationFactor);
        }
        if (virtualNodes < 1) {
            throw new IllegalArgumentException("virtualNodes must be >= 1, was " + virtualNodes);
        }
        if (blockSize < 1) {
            throw new IllegalArgumentException("blockSize must be >= 1, was " + blockSize);
        }
        if ((long) blockSize + BLOCK_FRAME_OVERHEAD > maxFrameSize) {
            throw new IllegalArgumentException("Block size " + blockSize + " does not fit into the maximum frame size "
                    + maxFrameSize + " (needs " + BLOCK_FRAME_OVERHEAD + " bytes of headroom)");
        }
        requirePositive(requestTimeout, "requestTimeout");
        requirePositive(pingInterval, "pingInterval");
        requirePositive(failureTimeout, "failureTimeout");
        Objects.requireNonNull(role, "role");
        requirePositive(repairInterval, "repairInterval");
        requirePositive(orphanGracePeriod, "orphanGracePeriod");
        Objects.requireNonNull(restore, "restore");
        Objects.requireNonNull(durability, "durability");
        if (durability.minReplicas() > replicationFactor) {
            throw new IllegalArgumentException("minReplicas (" + durability.minReplicas()
                    + ") must not exceed the replication factor (" + replicationFactor + ")");
        }
        if (storeMaxBytes < 1) {
            throw new IllegalArgumentException("storeMaxBytes must be positive, was " + storeMaxBytes);
        }
    }

    /** A storage node with the default repair interval. */
    public NodeConfig(String host, List<Integer> ports, List<String> seeds, int replicationFactor, String zone,
            int virtualNodes, @Nullable Path storeDirectory, boolean fsync, @Nullable String secret, int maxFrameSize,
            Duration requestTimeout, Duration pingInterval, Duration failureTimeout, int blockSize) {
        this(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync,
                TransportSecurity.ofSecret(secret), TransportLimits.defaults(), maxFrameSize,
                requestTimeout, pingInterval, failureTimeout, blockSize, RingRole.STORAGE, DEFAULT_REPAIR_INTERVAL,
                Long.MAX_VALUE, DEFAULT_ORPHAN_GRACE_PERIOD, RestoreSettings.defaults(),
                DurabilitySettings.defaults(replicationFactor));
    }

    /** The default of {@code sr3.repair.interval}. */
    public static final Duration DEFAULT_REPAIR_INTERVAL = Duration.ofSeconds(1);

    /** The default of {@code sr3.store.orphan-grace-period}. */
    public static final Duration DEFAULT_ORPHAN_GRACE_PERIOD = Duration.ofMinutes(10);

    private static void requirePositive(Duration value, String name) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be a positive duration, was " + value);
        }
    }

    /** A copy listening on another port and storing in another directory: for extra nodes in one JVM. */
    public NodeConfig withPortAndStore(int port, @Nullable Path store) {
        return new NodeConfig(host, List.of(port), seeds, replicationFactor, zone, virtualNodes, store, fsync, security,
                limits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, role, repairInterval,
                storeMaxBytes, orphanGracePeriod, restore, durability);
    }

    /** A copy with another shared secret: for tests of the handshake. */
    public NodeConfig withSecret(@Nullable String newSecret) {
        return new NodeConfig(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync,
                new TransportSecurity(security.tls(), newSecret, security.unauthenticatedAllowed()), limits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, role, repairInterval,
                storeMaxBytes, orphanGracePeriod, restore, durability);
    }

    /** A copy with other seeds. */
    public NodeConfig withSeeds(List<String> newSeeds) {
        return new NodeConfig(host, ports, newSeeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync, security,
                limits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, role, repairInterval,
                storeMaxBytes, orphanGracePeriod, restore, durability);
    }

    /** A copy with another store limit and orphan grace period. */
    public NodeConfig withStoreLimits(long newStoreMaxBytes, Duration newOrphanGracePeriod) {
        return new NodeConfig(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync, security,
                limits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, role, repairInterval,
                newStoreMaxBytes, newOrphanGracePeriod, restore, durability);
    }

    /** A copy with other restore settings. */
    public NodeConfig withRestore(RestoreSettings newRestore) {
        return new NodeConfig(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync, security,
                limits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, role, repairInterval,
                storeMaxBytes, orphanGracePeriod, newRestore, durability);
    }

    /** A copy with another write quorum, repair delay or tombstone retention. */
    public NodeConfig withDurability(DurabilitySettings newDurability) {
        return new NodeConfig(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync, security,
                limits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, role, repairInterval,
                storeMaxBytes, orphanGracePeriod, restore, newDurability);
    }

    /** A copy with another role. */
    public NodeConfig withRole(RingRole newRole) {
        return new NodeConfig(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync, security,
                limits, maxFrameSize, requestTimeout, pingInterval, failureTimeout, blockSize, newRole, repairInterval,
                storeMaxBytes, orphanGracePeriod, restore, durability);
    }

    /** A copy with another block size and largest frame. */
    public NodeConfig withBlockAndFrameSize(int newBlockSize, int newMaxFrameSize) {
        return new NodeConfig(host, ports, seeds, replicationFactor, zone, virtualNodes, storeDirectory, fsync, security,
                limits, newMaxFrameSize, requestTimeout, pingInterval, failureTimeout, newBlockSize, role, repairInterval,
                storeMaxBytes, orphanGracePeriod, restore, durability);
    }

    /** Defaults for a single-host ring, as the option defaults say. */
    public static NodeConfig defaults() {
        return new NodeConfig("127.0.0.1", List.of(0), List.of(), 2, "", 64, null, false, null,
                16 * 1024 * 1024, Duration.ofSeconds(10), Duration.ofMillis(500), Duration.ofSeconds(5), 4 * 1024 * 1024);
    }
}
