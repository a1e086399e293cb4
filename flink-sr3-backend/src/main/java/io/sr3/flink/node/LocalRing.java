package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The ring nodes of this JVM: the one per-process registry, and the only static mutable state
 * of a TaskManager. (The JobManager side keeps its running per-job drivers in two of its own,
 * {@code CheckpointPacers} and {@code ReplicationPlanners}.) State a layer above keeps per node,
 * such as prefetched blocks or the restore layer's network view, hangs off the node itself
 * ({@link RingNode#attachment}), never off a static.
 *
 * <p>Flink creates the {@code sr3://} FileSystem, the state backend and the checkpoint storage
 * separately and gives them no shared context, so they meet here. In a TaskManager process this
 * holds exactly one node. In a MiniCluster (all TaskManagers in one JVM) it holds the node that
 * serves them all, plus any extra nodes a test starts; those find each other through this list
 * without configuration, but always talk over real sockets.
 *
 * <p>{@link #current} returns the oldest running node, starting one from the most recently offered
 * configuration when none runs. When that node stops, the next oldest takes over.
 */
@ThreadSafe
public final class LocalRing {

    private static final Logger LOG = LoggerFactory.getLogger(LocalRing.class);
    private static final Object LOCK = new Object();

    @GuardedBy("LOCK")
    private static final List<RingNode> NODES = new ArrayList<>();

    @GuardedBy("LOCK")
    private static NodeConfig offeredConfig;

    private LocalRing() {}

    /**
     * Records the configuration a node of this JVM should start with, if one has to start. Cheap
     * and without side effects, so Flink's factories may call it as often as they are called.
     */
    public static void offerConfig(NodeConfig config) {
        synchronized (LOCK) {
            offeredConfig = config;
        }
    }

    /** The node serving this JVM, started on first use. */
    public static RingNode current() throws IOException {
        synchronized (LOCK) {
            for (RingNode node : NODES) {
                if (node.isRunning()) {
                    return node;
                }
            }
            NodeConfig config = offeredConfig != null ? offeredConfig : NodeConfig.defaults();
            LOG.info("Starting the sr3 ring node of this process");
            return RingNode.start(config);
        }
    }

    /**
     * The node serving this JVM if one runs, without starting one: for components that only make
     * sense next to a running node (the pacer's status and rate reads), which must not start a
     * storage node of their own when they outlive the cluster they belonged to.
     */
    public static java.util.Optional<RingNode> running() {
        synchronized (LOCK) {
            for (RingNode node : NODES) {
                if (node.isRunning()) {
                    return java.util.Optional.of(node);
                }
            }
            return java.util.Optional.empty();
        }
    }

    /** Members of the storage nodes running in this JVM (client nodes are never members). */
    public static List<Member> members() {
        synchronized (LOCK) {
            List<Member> members = new ArrayList<>(NODES.size());
            for (RingNode node : NODES) {
                if (!node.isClient()) {
                    members.add(node.self());
                }
            }
            return members;
        }
    }

    /** The nodes running in this JVM, oldest first. */
    public static List<RingNode> nodes() {
        synchronized (LOCK) {
            return List.copyOf(NODES);
        }
    }

    static void register(RingNode node) {
        synchronized (LOCK) {
            NODES.add(node);
        }
    }

    static void unregister(RingNode node) {
        synchronized (LOCK) {
            NODES.remove(node);
        }
    }
}
