package io.sr3.flink.node;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * A block or manifest reached fewer distinct nodes than {@code sr3.ring.min-replicas}: it is not
 * stored, and the file (and so the checkpoint) it belongs to fails. The message names the key, the
 * nodes that acknowledged and what each other node answered.
 */
public class WriteQuorumException extends IOException {

    private static final long serialVersionUID = 1L;

    public WriteQuorumException(String key, int quorum, List<String> acknowledged, Map<String, String> failures,
            int ringSize) {
        super("Could not store " + key + " on " + quorum + " distinct ring nodes (sr3.ring.min-replicas): "
                + (acknowledged.isEmpty() ? "no node acknowledged" : "acknowledged only by " + acknowledged)
                + (failures.isEmpty() ? "" : "; failed: " + failures) + "; the ring has " + ringSize
                + " reachable storage node(s)"
                + (ringSize < quorum ? ", fewer than the quorum: start more TaskManagers or lower sr3.ring.min-replicas"
                        : ""));
    }
}
