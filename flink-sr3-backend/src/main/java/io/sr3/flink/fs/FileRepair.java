package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.store.BlockStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The repair of one file for {@link ReplicaRepairer}, which decides when to scan: brings each of
 * its blocks back to the file's copies from an intact replica, and rewrites its manifest on the
 * manifest's placement and on every node holding a copy, as the repairer's Javadoc describes.
 */
@NotThreadSafe
final class FileRepair {

    /** Logs as the repairer: operators (and tests) follow replica repair under that one category. */
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaRepairer.class);

    private final RingNode node;
    private final ManifestStore manifests;
    /** Manifests and blocks whose failure was logged already, shared with the repairer's scan. */
    private final Set<String> failureLogged;
    /** Files to check at the next scan, check or not: a repair could not read a block from any live holder. */
    private final Set<String> checkNextScan = new HashSet<>();
    /** Files another node owns, by key, with the {@link #nanoClock} time this node first counted them short. */
    private final Map<String, Long> shortUnderAnotherOwner = new HashMap<>();
    private final LongSupplier nanoClock;

    /**
     * How long a holder of a short file that another node owns waits for that owner's rewrite (and
     * at least {@code sr3.repair.delay}) before it repairs the file itself: the owner may see the
     * file at full strength (its view of the members differs) or have called its last scan clean
     * before the short copy reached it, and then would not look again until its next check.
     */
    static final Duration OWNER_GRACE = Duration.ofSeconds(30);

    FileRepair(RingNode node, Set<String> failureLogged, LongSupplier nanoClock) {
        this.node = node;
        this.manifests = new ManifestStore(node);
        this.failureLogged = failureLogged;
        this.nanoClock = nanoClock;
    }

    /** What the repairs of one scan did. */
    static final class Counts {
        long remaining;
        long repairedBlocks;
        long copiedManifests;
        /** Blocks without an intact replica found by a check. */
        long lost;
    }

    /**
     * Repairs the file whose manifest this node holds under {@code key}, if this node is the
     * first holder of its newest copy in the key's ring order, and counts what it did.
     *
     * @param check whether to ask holders which blocks they really hold; a file whose repair
     *     could not read a block from any live holder is checked at the next scan regardless
     */
    void repairFile(String key, ConsistentHash ring, Counts counts, boolean check) throws IOException {
        check |= checkNextScan.remove(key);
        // Kept only while this scan counts the file short under another owner (below).
        Long shortSince = shortUnderAnotherOwner.remove(key);
        byte[] encoded;
        try {
            encoded = node.store().get(key);
        } catch (BlockNotFoundException e) {
            return; // deleted meanwhile
        }
        Manifest local;
        try {
            local = Manifest.decode(encoded, "manifest " + key + " on " + node.self().id());
        } catch (IOException e) {
            // Describes no readable file, so nothing to repair; readers of the key skip this copy.
            if (failureLogged.add(key)) {
                node.metrics().corruptManifests.incrementAndGet();
                LOG.warn("[{}] replica repair skips {}: {}", node.self().id(), key, e.getMessage());
            }
            return;
        }
        if (local.isTombstone()) {
            return; // a deleted file: never re-replicated
        }
        ManifestStore.Versions versions = manifests.readEvery(key, "manifest " + key + " (repair)");
        if (versions == null) {
            return; // deleted meanwhile
        }
        if (!Arrays.equals(versions.newestCopy(), encoded)
                && ManifestStore.isNewer(versions.newest(), versions.newestCopy(), local, encoded)) {
            // Changed or deleted meanwhile, or a same-generation copy another repairer wrote with a
            // different view: the read may not have asked this node, so replace the copy here, and
            // repair the newer copy now if this node owns its repair: this scan may be its last
            // until the members change, while the other holders count the newer copy's short blocks.
            if (!RingStorage.await(manifests.putUnlessOutranked(node.self(), key, versions.newestCopy(), encoded))) {
                counts.remaining++; // changed again since the read: read at the next scan
                return;
            }
            encoded = versions.newestCopy();
        }
        if (versions.newest().isTombstone()) {
            return;
        }
        int replicationFactor = node.config().replicationFactor();
        int wanted = Math.min(versions.newest().copiesOr(replicationFactor), ring.size());
        List<Member> copies = inRingOrder(versions.holders(), key, ring);
        if (copies.isEmpty() || !copies.get(0).sameNode(node.self())) {
            // Another node repairs this file; until its rewrite reaches this copy, a short block
            // here is still work: this node scans again instead of calling itself clean, and
            // repairs the file itself once the owner has let it stay short for the grace period.
            if (!hasShortBlock(versions.newest(), wanted)) {
                return;
            }
            long now = nanoClock.getAsLong();
            long since = shortSince != null ? shortSince : now;
            Duration grace = node.config().durability().repairDelay().compareTo(OWNER_GRACE) > 0
                    ? node.config().durability().repairDelay() : OWNER_GRACE;
            if (now - since < grace.toNanos()) {
                shortUnderAnotherOwner.put(key, since);
                counts.remaining++;
                return;
            }
            LOG.info("[{}] replica repair: {} has had a block under the replication factor here for {} s while {} owns "
                    + "its repair; repairing it from this node", node.self().id(), key, (now - since) / 1_000_000_000L,
                    copies.isEmpty() ? "no live holder of its manifest" : copies.get(0));
        }
        Manifest manifest = versions.newest();
        HolderCheck found = check ? HolderCheck.ask(node, manifest) : HolderCheck.NONE;
        List<Manifest.BlockRef> blocks = new ArrayList<>(manifest.blocks().size());
        boolean changed = false;
        for (Manifest.BlockRef block : manifest.blocks()) {
            List<Member> live = new ArrayList<>();
            Map<String, String> lacking = new LinkedHashMap<>();
            for (Member holder : block.holders()) {
                if (!node.membership().isLive(holder)) {
                    continue;
                }
                BlockStore.Presence presence = found.of(holder, block.key());
                if (presence == null || presence.state() == BlockStore.Presence.State.INTACT) {
                    live.add(holder); // intact, or no answer: counts as without the check
                } else {
                    lacking.put(holder.id(), presence.state().name().toLowerCase(java.util.Locale.ROOT)
                            + " (" + presence.detail() + ")");
                }
            }
            if (live.size() >= wanted && lacking.isEmpty()) {
                blocks.add(block);
                continue;
            }
            boolean lostEverywhere = live.isEmpty() && lacking.size() == block.holders().size();
            if (!lacking.isEmpty() && !failureLogged.contains("lost " + block.key())) {
                // A lost block stays listed as it was: its replicas count once, not at every check.
                node.metrics().missingReplicasFound.addAndGet(lacking.size());
                if (!lostEverywhere) {
                    LOG.warn("[{}] replica repair check: block {} of {} has no intact copy on {}; re-creating it from "
                            + "an intact replica", node.self().id(), block.key(), manifest.path(), lacking);
                }
            }
            List<Member> repaired = live.size() >= wanted
                    ? new ArrayList<>(live)
                    : repair(key, manifest, block, live, ring, wanted, lostEverywhere ? lacking : null);
            boolean copied = repaired.size() > live.size();
            if (repaired.isEmpty() && lostEverywhere) {
                counts.lost++;
                blocks.add(block); // nothing to list instead: fsck and readers keep naming it
                continue;
            }
            if (repaired.size() < wanted) {
                counts.remaining++;
                // Holders that are not live now may be on their way back (a restart of the whole
                // cluster): while the block is short, they stay listed; holders that answered
                // they lack it do not.
                for (Member holder : block.holders()) {
                    if (!holder.isIn(repaired) && !lacking.containsKey(holder.id())) {
                        repaired.add(holder);
                    }
                }
            }
            if (copied || !sameNodes(repaired, block.holders())) {
                changed = true;
                counts.repairedBlocks++;
            }
            blocks.add(new Manifest.BlockRef(block.key(), block.length(), block.crc32c(), repaired));
        }
        List<Member> targets = new ArrayList<>(ring.placement(key, null,
                Math.min(manifest.manifestCopies(replicationFactor), ring.size())));
        boolean manifestShort = false;
        for (Member target : targets) {
            if (!target.isIn(copies)) {
                manifestShort = true;
            }
        }
        if ((changed || manifestShort) && node.store().contains(key)) {
            // A higher generation, so readers prefer the repaired copy; two repairers with different
            // views write the same generation, and either's holders are valid.
            byte[] rewritten = changed ? manifest.withBlocks(blocks, manifest.generation() + 1).encode() : encoded;
            for (Member copy : copies) {
                if (!copy.isIn(targets)) {
                    targets.add(copy);
                }
            }
            if (!rewrite(key, rewritten, versions.newestCopy(), targets)) {
                counts.remaining++; // deleted or changed since the read: the next scan reads it again
                return;
            }
            if (manifestShort) {
                counts.copiedManifests++;
            }
        }
    }

    /** Whether two holder lists name the same nodes, in any order. */
    private static boolean sameNodes(List<Member> a, List<Member> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (Member m : a) {
            if (!m.isIn(b)) {
                return false;
            }
        }
        return true;
    }

    /** Whether a block of {@code manifest} has fewer live holders than {@code wanted}. */
    private boolean hasShortBlock(Manifest manifest, int wanted) {
        for (Manifest.BlockRef block : manifest.blocks()) {
            int live = 0;
            for (Member holder : block.holders()) {
                if (node.membership().isLive(holder)) {
                    live++;
                }
            }
            if (live < wanted) {
                return true;
            }
        }
        return false;
    }

    /**
     * Stores a rewritten manifest on every target in parallel, each only where it outranks the
     * target's copy: a delete or a new version stored since the repair's read wins, and the rewrite
     * reports that it was superseded (false) instead of bringing the old file back. A target that
     * refuses it (a full store) keeps its older copy, which readers rank below this one; the
     * rewrite fails only if fewer than the write quorum (or every target, if fewer) took it.
     *
     * @param read the copy the repair read, which the targets are assumed to hold
     */
    private boolean rewrite(String key, byte[] rewritten, byte[] read, List<Member> targets) throws IOException {
        List<CompletableFuture<Boolean>> puts = new ArrayList<>(targets.size());
        for (Member target : targets) {
            puts.add(manifests.putUnlessOutranked(target, key, rewritten, read));
        }
        int stored = 0;
        List<String> superseded = new ArrayList<>();
        Map<String, String> refused = new LinkedHashMap<>();
        for (int i = 0; i < targets.size(); i++) {
            try {
                if (RingStorage.await(puts.get(i))) {
                    stored++;
                } else {
                    superseded.add(targets.get(i).id());
                }
            } catch (IOException e) {
                refused.put(targets.get(i).id(), e.getMessage());
            }
        }
        if (!superseded.isEmpty()) {
            LOG.info("[{}] replica repair of {} superseded: {} hold a newer copy (deleted or rewritten since the "
                    + "repair read it); not rewritten there, read again at the next scan", node.self().id(), key,
                    superseded);
            return false;
        }
        if (stored < Math.min(node.storage().writeQuorum(), targets.size())) {
            throw new IOException("the rewritten manifest reached " + stored + " of " + targets.size() + " nodes: " + refused);
        }
        if (!refused.isEmpty() && failureLogged.add(key + " rewrite")) {
            LOG.info("[{}] replica repair rewrote {} on {} of {} nodes; these kept their older copy: {}",
                    node.self().id(), key, stored, targets.size(), refused);
        }
        return true;
    }

    /**
     * Copies one block to new holders; returns the live holders afterwards.
     *
     * @param key the manifest's key: a file whose block no live holder could serve is checked at
     *     the next scan, so holders that lost it stop counting long before the next regular check
     * @param lostOn when every recorded holder answered that it lacks the block, what each said;
     *     the block is then looked for on every node, and reported as lost if none has it
     */
    private List<Member> repair(String key, Manifest manifest, Manifest.BlockRef block, List<Member> live,
            ConsistentHash ring, int wanted, @Nullable Map<String, String> lostOn) {
        List<Member> holders = new ArrayList<>(live);
        if (lostOn != null) {
            byte[] data;
            try {
                // No holder: readVerified asks every node in the key's ring order.
                data = node.storage().readVerified(block.key(), block.length(), block.crc32c(), List.of(),
                        "block " + block.key() + " of " + manifest.path() + " (repair)");
            } catch (IOException e) {
                if (!failureLogged.add("lost " + block.key())) {
                    return holders; // logged at an earlier check; counted in lostBlocks at each
                }
                LOG.warn("[{}] block {} of {} is LOST: no recorded holder has an intact copy ({}) and no other node "
                        + "has one ({}). The file cannot be read; a checkpoint that references it cannot be "
                        + "restored", node.self().id(), block.key(), manifest.path(), lostOn, e.getMessage());
                return holders;
            }
            LOG.warn("[{}] block {} of {}: no recorded holder has an intact copy ({}), but another node had one; "
                    + "copying it", node.self().id(), block.key(), manifest.path(), lostOn);
            return copy(manifest, block, data, holders, ring, wanted);
        }
        if (live.isEmpty()) {
            if (failureLogged.add(block.key())) {
                LOG.warn("[{}] block {} of {} has no live replica left; it cannot be repaired unless a holder returns",
                        node.self().id(), block.key(), manifest.path());
            }
            return holders;
        }
        byte[] data;
        try {
            data = node.storage().readVerified(block.key(), block.length(), block.crc32c(), live,
                    "block " + block.key() + " of " + manifest.path() + " (repair)");
        } catch (IOException e) {
            if (failureLogged.add("unreadable " + block.key())) {
                checkNextScan.add(key);
                LOG.info("[{}] replica repair could not read block {} of {} from its live holders {} ({}); asking "
                        + "them at the next scan which blocks of the file they hold", node.self().id(), block.key(),
                        manifest.path(), live, e.getMessage());
            } else {
                LOG.debug("[{}] could not read {} for repair: {}", node.self().id(), block.key(), e.getMessage());
            }
            return holders;
        }
        return copy(manifest, block, data, holders, ring, wanted);
    }

    /** Stores {@code data} on placement targets of the block until {@code holders} has {@code wanted} nodes. */
    private List<Member> copy(Manifest manifest, Manifest.BlockRef block, byte[] data, List<Member> holders,
            ConsistentHash ring, int wanted) {
        for (Member target : ring.placement(block.key(), null, ring.size())) {
            if (holders.size() >= wanted) {
                break;
            }
            if (target.isIn(holders)) {
                continue;
            }
            try {
                RingStorage.await(node.put(target, block.key(), data));
                holders.add(target);
                node.metrics().blocksReReplicated.incrementAndGet();
                node.metrics().bytesReReplicated.addAndGet(data.length);
            } catch (IOException e) {
                LOG.info("[{}] could not copy {} to {} for repair: {}", node.self().id(), block.key(), target.id(),
                        e.getMessage());
            }
        }
        return holders;
    }

    /** The live members among {@code holders}, in the key's ring order. */
    private static List<Member> inRingOrder(List<Member> holders, String key, ConsistentHash ring) {
        List<Member> ordered = new ArrayList<>();
        for (Member member : ring.successors(key)) {
            if (member.isIn(holders)) {
                ordered.add(member);
            }
        }
        return ordered;
    }
}
