package io.sr3.flink.restore;

import javax.annotation.concurrent.ThreadSafe;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bytes each holder still has to send for the restores running on this node. When a whole
 * TaskManager's subtasks restore at once, each new plan starts from what the running ones already
 * asked of every holder, so that blocks go to holders nobody is waiting on yet instead of making
 * one holder everybody's bottleneck.
 */
@ThreadSafe
public final class HolderLoad {

    private final Map<String, Long> pendingBytes = new ConcurrentHashMap<>();

    void add(String holder, long bytes) {
        pendingBytes.merge(holder, bytes, (a, b) -> a + b);
    }

    void remove(String holder, long bytes) {
        pendingBytes.computeIfPresent(holder, (h, pending) -> pending - bytes <= 0 ? null : pending - bytes);
    }

    /** A copy: holder id to bytes still to be sent to this node. */
    public Map<String, Long> snapshot() {
        return new HashMap<>(pendingBytes);
    }
}
