package io.sr3.flink.restore;

import io.sr3.flink.node.NodeExtension;
import io.sr3.flink.node.RingNode;

/**
 * Gives every node its {@link NetworkView} at start, so that the round trips of its first pings
 * inform its first restore plan, and starts its {@link LinkProbe} where
 * {@code sr3.restore.probe-interval} asks for one.
 */
public final class RestoreNodeExtension implements NodeExtension {

    @Override
    public void started(RingNode node) {
        NetworkView.of(node);
        LinkProbe.scheduleOn(node);
    }
}
