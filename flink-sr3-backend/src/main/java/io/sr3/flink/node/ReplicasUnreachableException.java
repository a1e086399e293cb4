package io.sr3.flink.node;

import java.io.IOException;
import java.util.Map;

/**
 * Too many nodes could not be asked to tell whether a key exists: it may be held only by nodes
 * that are paused, partitioned or restarting. Never reported as "absent", because a file whose
 * holders are unreachable still exists. The message names the unreachable nodes.
 */
public class ReplicasUnreachableException extends IOException {

    private static final long serialVersionUID = 1L;

    public ReplicasUnreachableException(String description, String key, int notFound, int needed,
            Map<String, String> unreachable) {
        super("Cannot tell whether " + description + " (" + key + ") exists: " + notFound + " node(s) answered that "
                + "they do not hold it, " + needed + " must to be sure, and these may hold it but cannot be reached: "
                + unreachable + ". It is unavailable, not lost: retry once they are back.");
    }
}
