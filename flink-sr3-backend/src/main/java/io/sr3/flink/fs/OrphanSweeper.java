package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.Membership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Deletes this node's blocks that no manifest on the ring references (blocks of crashed writers
 * and failed checkpoints, copies left on a node that was down while Flink deleted the file, copies
 * the repair made of a file deleted meanwhile), and its tombstones older than
 * {@code sr3.store.tombstone-retention}.
 *
 * <p>It also trims surplus copies: a block the newest manifest references, but without this node
 * among its holders and with at least the replication factor of live holders listed (this node
 * returned after repair had copied the block elsewhere).
 *
 * <p>A block is deleted only when its absence from every manifest (or its surplus) is certain,
 * because deleting a referenced block turns a temporary outage into permanent loss:
 * <ul>
 *   <li>the block is older than {@code sr3.store.orphan-grace-period} (a file's blocks are stored
 *       before its manifest);
 *   <li>the sweep saw a complete ring: no member suspected, none removed within the grace period
 *       (it may come back with manifests nobody else holds), this node up for a grace period, every
 *       member listed and every manifest read (an unreachable copy aborts the sweep);
 *   <li>two sweeps a grace period apart both found it unreferenced.
 * </ul>
 * A manifest none of whose copies decodes is logged and counted once and skipped: it describes no
 * readable file. Runs on one storage node's maintenance thread, at the grace period's interval.
 */
@NotThreadSafe
final class OrphanSweeper implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanSweeper.class);
    static final String TASK_NAME = "orphan-sweep";

    private final RingNode node;
    private final LongSupplier wallClockMillis;
    private final LongSupplier nanoClock;
    private final long startedNanos;
    private final ManifestStore manifests;
    /** Blocks the previous complete sweep found unreferenced: only these may be deleted by the next. */
    private Set<String> unreferencedBefore = Set.of();

    OrphanSweeper(RingNode node, LongSupplier wallClockMillis, LongSupplier nanoClock) {
        this.node = node;
        this.wallClockMillis = wallClockMillis;
        this.nanoClock = nanoClock;
        this.startedNanos = nanoClock.getAsLong();
        this.manifests = new ManifestStore(node);
    }

    @Override
    public void run() {
        try {
            sweep();
        } catch (IOException e) {
            LOG.info("[{}] orphan sweep skipped, nothing deleted: {}", node.self().id(), e.getMessage());
        }
    }

    /** One sweep; returns the blocks deleted. */
    long sweep() throws IOException {
        purgeTombstones();
        String unsafe = whyUnsafe();
        if (unsafe != null) {
            unreferencedBefore = Set.of();
            LOG.info("[{}] orphan sweep postponed, nothing deleted: {}", node.self().id(), unsafe);
            return 0;
        }
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
            unreferencedBefore = Set.of();
            return 0;
        }
        Map<String, Referenced> referenced = referencedBlocks();
        Set<String> unreferenced = new HashSet<>();
        long swept = 0;
        long trimmed = 0;
        long bytes = 0;
        for (String key : candidates) {
            Referenced block = referenced.get(key);
            if (block != null && !isSurplus(block)) {
                continue;
            }
            if (!unreferencedBefore.contains(key)) {
                unreferenced.add(key); // first sighting: deleted by the next sweep if still unreferenced
                continue;
            }
            long size = node.store().sizeOnDisk(key);
            node.store().delete(key);
            if (block == null) {
                swept++;
            } else {
                trimmed++;
            }
            bytes += size;
        }
        unreferencedBefore = unreferenced;
        if (swept + trimmed > 0) {
            node.metrics().orphanBlocksSwept.addAndGet(swept);
            node.metrics().surplusBlocksTrimmed.addAndGet(trimmed);
            node.metrics().orphanBytesSwept.addAndGet(bytes);
            LOG.info("[{}] deleted {} orphaned block(s) that no manifest referenced and {} surplus cop{} that the "
                    + "manifest no longer lists beside enough live ones, in two sweeps ({} bytes)", node.self().id(),
                    swept, trimmed, trimmed == 1 ? "y" : "ies", bytes);
        }
        if (!unreferenced.isEmpty()) {
            LOG.debug("[{}] {} block(s) unreferenced for the first time; deleted next sweep if still so",
                    node.self().id(), unreferenced.size());
        }
        return swept + trimmed;
    }

    /** Why this node's view of the ring is not complete enough to delete anything, or null. */
    private String whyUnsafe() {
        Duration grace = node.config().orphanGracePeriod();
        if (nanoClock.getAsLong() - startedNanos < grace.toNanos()) {
            return "this node started less than sr3.store.orphan-grace-period (" + grace + ") ago";
        }
        Set<String> suspected = node.membership().suspected();
        if (!suspected.isEmpty()) {
            return "members " + suspected + " are suspected";
        }
        List<Membership.Departure> departed = node.membership().departedWithin(grace);
        if (!departed.isEmpty()) {
            List<String> ids = new ArrayList<>();
            for (Membership.Departure d : departed) {
                ids.add(d.member().id());
            }
            return "members " + ids + " left the ring within sr3.store.orphan-grace-period and may come back";
        }
        return null;
    }

    /**
     * Whether this node's copy of a referenced block is surplus: the newest manifest does not list
     * this node, and lists at least the file's copies of live holders (a node that returned after
     * repair had copied its blocks elsewhere).
     */
    private boolean isSurplus(Referenced referenced) {
        int live = 0;
        for (Member holder : referenced.block().holders()) {
            if (holder.sameNode(node.self())) {
                return false;
            }
            if (node.membership().isLive(holder)) {
                live++;
            }
        }
        return live >= referenced.copies();
    }

    /** A block the newest manifest of its file lists, and the copies that file asks for. */
    private record Referenced(Manifest.BlockRef block, int copies) {}

    /** Every block the newest manifest of any key on any member references, by key. */
    private Map<String, Referenced> referencedBlocks() throws IOException {
        Set<String> manifestKeys = new HashSet<>();
        for (Member member : node.membership().members()) {
            manifestKeys.addAll(RingStorage.await(node.list(member, "m-")));
        }
        Map<String, Referenced> referenced = new HashMap<>();
        for (String key : manifestKeys) {
            ManifestStore.Versions versions;
            try {
                versions = manifests.read(key, "manifest " + key + " (orphan sweep)");
            } catch (io.sr3.flink.node.ReplicasUnreachableException e) {
                throw e;
            } catch (IOException e) {
                continue; // no copy decodes: reported once by the manifest store
            }
            if (versions != null) {
                int copies = versions.newest().copiesOr(node.config().replicationFactor());
                for (Manifest.BlockRef block : versions.newest().blocks()) {
                    referenced.put(block.key(), new Referenced(block, copies));
                }
            }
        }
        return referenced;
    }

    /** Deletes this node's tombstones older than the retention; undecodable copies are left to the readers. */
    private void purgeTombstones() throws IOException {
        long cutoff = wallClockMillis.getAsLong() - node.config().durability().tombstoneRetention().toMillis();
        long purged = 0;
        for (String key : node.store().keys("m-")) {
            try {
                Manifest manifest = Manifest.decode(node.store().get(key), key);
                if (manifest.isTombstone() && manifest.modificationTime() < cutoff) {
                    node.store().delete(key);
                    purged++;
                }
            } catch (IOException e) {
                // deleted meanwhile, or undecodable: reads report it
            }
        }
        if (purged > 0) {
            LOG.info("[{}] deleted {} tombstone(s) older than sr3.store.tombstone-retention", node.self().id(), purged);
        }
    }
}
