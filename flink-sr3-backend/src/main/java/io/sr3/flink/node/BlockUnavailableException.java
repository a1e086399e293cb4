package io.sr3.flink.node;

import java.io.IOException;
import java.util.Map;

/**
 * No live replica returned an intact copy of a block: the state it belongs to cannot be restored
 * from the ring. The message names the file, the block and what each node answered.
 */
public class BlockUnavailableException extends IOException {

    private static final long serialVersionUID = 1L;

    public BlockUnavailableException(String description, String key, Map<String, String> failuresByNode) {
        super("Lost " + description + " (block " + key + "): no intact replica on any live ring node; tried "
                + (failuresByNode.isEmpty() ? "no node (the ring is empty)" : failuresByNode)
                + ". More replicas were lost than sr3.ring.replication-factor tolerates.");
    }
}
