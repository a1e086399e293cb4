package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Deletes this node's blocks that no manifest on the ring references once they are older than
 * {@code sr3.store.orphan-grace-period}: blocks of crashed writers and failed checkpoints, copies
 * left on a node that was down while Flink deleted the file, and copies the repair made of a file
 * deleted meanwhile.
 *
 * <p>Runs on one storage node's maintenance thread, at the grace period's interval. A sweep
 * first picks the local blocks older than the grace period; only if there are any does it list
 * the manifest keys of every member and read each manifest once, to collect the referenced
 * blocks. If any member cannot be listed or any manifest cannot be read, the sweep deletes
 * nothing: a block is removed only when the ring said for certain that nothing uses it. The
 * grace period protects files being written, whose blocks are stored before their manifest.
 */
@NotThreadSafe
final class OrphanSweeper implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanSweeper.class);
    static final String TASK_NAME = "orphan-sweep";

    private final RingNode node;
    private final LongSupplier wallClockMillis;

    OrphanSweeper(RingNode node, LongSupplier wallClockMillis) {
        this.node = node;
        this.wallClockMillis = wallClockMillis;
    }

    @Override
    public void run() {
        try {
            sweep();
        } catch (IOException e) {
            LOG.info("[{}] orphan sweep skipped: {}", node.self().id(), e.getMessage());
        }
    }

    /** One sweep; returns the blocks deleted. */
    long sweep() throws IOException {
        long cutoff = wallClockMillis.getAsLong() - node.config().orphanGracePeriod().toMillis();
        List<String> candidates = new ArrayList<>();
        for (String key : node.store().keys("b-")) {
            try {
                if (node.store().lastModifiedMillis(key) < cutoff) {
                    candidates.add(key);
                }
            } catch (IOException e) {
                // deleted meanwhile
            }
        }
        if (candidates.isEmpty()) {
            return 0;
        }
        Set<String> manifestKeys = new HashSet<>();
        for (Member member : node.membership().members()) {
            manifestKeys.addAll(RingStorage.await(node.list(member, "m-")));
        }
        Set<String> referenced = new HashSet<>();
        for (String key : manifestKeys) {
            byte[] encoded = node.storage().readAny(key, "manifest " + key + " (orphan sweep)");
            if (encoded != null) {
                for (Manifest.BlockRef block : Manifest.decode(encoded, key).blocks()) {
                    referenced.add(block.key());
                }
            }
        }
        long swept = 0;
        long bytes = 0;
        for (String key : candidates) {
            if (!referenced.contains(key)) {
                long size = node.store().contains(key) ? node.store().get(key).length : 0;
                node.store().delete(key);
                swept++;
                bytes += size;
            }
        }
        if (swept > 0) {
            node.metrics().orphanBlocksSwept.addAndGet(swept);
            node.metrics().orphanBytesSwept.addAndGet(bytes);
            LOG.info("[{}] deleted {} orphaned block(s) ({} bytes) that no manifest references", node.self().id(), swept,
                    bytes);
        }
        return swept;
    }
}
