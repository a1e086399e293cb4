package io.sr3.flink.node;

import java.util.List;
import java.util.ServiceLoader;

/**
 * What a layer above the node adds to every node from its start: the file layer's maintenance
 * tasks (replica repair, the orphan sweep), the restore layer's measurements of the links
 * towards the node. Found through {@link ServiceLoader}
 * ({@code META-INF/services/io.sr3.flink.node.NodeExtension}), so that the node runs them
 * without depending on those layers, and a node started anywhere (a TaskManager, a standalone
 * {@code Sr3RingNodeMain}, a test) runs the same ones.
 */
public interface NodeExtension {

    /**
     * Called once for each node, client nodes included, after it joined the ring and before
     * {@link RingNode#start} returns. Must not block: schedule work with {@link
     * RingNode#scheduleMaintenance}.
     */
    void started(RingNode node);

    /** The extensions on the class path of this class's loader (Flink's plugin loader in a plugin). */
    static List<NodeExtension> onClassPath() {
        return ServiceLoader.load(NodeExtension.class, NodeExtension.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get)
                .toList();
    }
}
