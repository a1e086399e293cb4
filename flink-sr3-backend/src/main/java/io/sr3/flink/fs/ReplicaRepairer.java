package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.Membership;
import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.store.BlockStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Restores the replication factor after a member left: the self-healing of the ring.
 *
 * <p>Runs on one storage node's maintenance thread. A scan happens when the set of members
 * differs from the one of the last scan that found nothing to repair (so a steady ring costs
 * nothing), and repeats until a scan is clean. It waits {@code sr3.repair.delay} after a member
 * left and after this node started, so a node that returns from a pause or a restart costs no
 * copying and a ring that is still forming is not mistaken for one that lost its members. A
 * holder that is not live is dropped from a manifest only once the block has its full replica
 * count without it. For each file manifest
 * this node holds whose copy is the newest generation, the node that repairs it is the first
 * member in the manifest key's ring order that holds a copy: one node per file while views
 * agree, and two nodes with different views write the same generation, either of which lists
 * valid holders. Deleted files (tombstones) are never repaired, and a manifest that cannot be
 * read is logged once and skipped without stopping the scan. For every block with fewer live holders than
 * {@code min(replication factor, ring size)} it reads a verified copy from a live holder, stores
 * it on the next placement targets that lack it, one block at a time (which bounds the rate to
 * what one node can copy sequentially), and then rewrites the manifest with the new holders on
 * its placement and on every node that holds a copy (it reads every reachable node, not only the
 * placement), so no stale copy still names the dead node; a target that refuses the rewrite (a
 * full store) keeps its older copy as long as a write quorum took the new one. A node that holds
 * a short file another node repairs counts it as work until that rewrite reaches its copy. A
 * manifest whose own copies fell under the factor is copied to its placement as well.
 *
 * <p><b>Presence, not belief.</b> Every {@code sr3.repair.check-interval}, even on a steady ring,
 * a scan is a <i>check</i>: for each file it repairs, the node asks every live holder its
 * manifest names, in one {@code CHECK_BLOCKS} request per holder, whether it holds an intact copy
 * of each block, judged by the block's header alone (present, the recorded length and CRC32C,
 * the file as long as its header says), so a check reads no block data and costs one round trip
 * per holder and file. The data itself is verified by each node's {@link
 * io.sr3.flink.node.BlockScrubber}, which moves a damaged block aside, so its holder answers
 * "missing" at the next check. A holder that answers missing or corrupt no longer counts: the
 * block is copied from an intact replica as if that holder had left, and the rewritten manifest
 * no longer lists it (unless the block is still short, when only holders that are away stay
 * listed). A holder that does not answer still counts, as it would without the check. A block
 * that no recorded holder has intact is searched on every node once per check; if none has it,
 * it is logged at WARN and counted in {@code lostBlocks}, and its manifest is left as it is so
 * that {@code fsck} and readers name it. Scans between checks trust the manifests.
 *
 * <p>Joins need no work: readers find blocks through the holders a manifest records, so data
 * stays where it is and new writes use the new ring; ownership moves lazily and checkpoints are
 * never blocked.
 *
 * <p>A delete during a rewrite cannot bring the file back: the rewrite stores the generation after
 * the one it read, and a tombstone takes a later one (or the same one, which tombstones win).
 */
@NotThreadSafe
final class ReplicaRepairer implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaRepairer.class);
    static final String TASK_NAME = "replica-repair";

    private final RingNode node;
    private final ManifestStore manifests;
    private final long startedNanos;
    private final java.util.function.LongSupplier nanoClock;
    /** When the latest check scan started. */
    private long lastCheckNanos;
    /** Blocks without an intact replica found by the check in progress. */
    private long lostInCheck;
    /** Manifests and blocks whose failure was logged already: a scan repeats every interval, its log must not. */
    private final Set<String> failureLogged = new HashSet<>();
    private final Set<String> delayLogged = new HashSet<>();
    /**
     * Members at the last scan if it found nothing to repair, none (an empty list) if the last
     * scan left work; read by {@link #pending()} from any thread.
     */
    private volatile List<Member> cleanMembers;

    ReplicaRepairer(RingNode node) {
        this(node, System::nanoTime);
    }

    /** @param nanoClock the time that decides when the repair delay is over and a check is due */
    ReplicaRepairer(RingNode node, java.util.function.LongSupplier nanoClock) {
        this.node = node;
        this.nanoClock = nanoClock;
        this.startedNanos = nanoClock.getAsLong();
        this.lastCheckNanos = startedNanos;
        this.manifests = new ManifestStore(node);
        this.cleanMembers = List.of(); // the first run always scans: the node may restart with old manifests
    }

    /**
     * Whether this node may still hold files under the replication factor: membership differs from
     * the one its last clean scan saw. True from the moment a member is dropped, before the next
     * scan starts, so "nothing pending" never reports a repair that has not run. Safe to call from
     * any thread.
     */
    boolean pending() {
        return !node.membership().members().equals(cleanMembers);
    }

    @Override
    public void run() {
        List<Member> members = node.membership().members();
        long now = nanoClock.getAsLong();
        boolean check = now - lastCheckNanos >= node.config().durability().repairCheckInterval().toNanos();
        if (members.equals(cleanMembers) && !check) {
            return;
        }
        if (now - startedNanos < node.config().durability().repairDelay().toNanos()) {
            return; // just started: the ring may still be forming (after a restart of every node, most holders are missing)
        }
        List<Membership.Departure> recent = node.membership().departedWithin(node.config().durability().repairDelay());
        if (!recent.isEmpty()) {
            Membership.Departure last = recent.get(recent.size() - 1);
            if (delayLogged.add(last.member().id() + "@" + last.removedAtNanos())) {
                LOG.info("[{}] replica repair waits sr3.repair.delay ({}) after {} left the ring, in case it comes back",
                        node.self().id(), node.config().durability().repairDelay(), last.member());
            }
            return;
        }
        try {
            lostInCheck = 0;
            long remaining = scan(node.membership().ring(), check);
            if (check) {
                lastCheckNanos = now;
                node.metrics().lostBlocks.set(lostInCheck);
            }
            node.metrics().underReplicatedBlocks.set(remaining);
            node.metrics().repairScans.incrementAndGet();
            // If members changed during the scan, pending() stays true. A scan that left work must
            // run again even if the members return to those of the last clean scan.
            cleanMembers = remaining == 0 ? members : List.of();
        } catch (IOException e) {
            cleanMembers = List.of();
            LOG.warn("[{}] replica repair scan stopped ({}); will scan again", node.self().id(), e.getMessage());
        }
    }

    /**
     * One pass over the local manifests; returns the blocks still under the factor.
     *
     * @param check whether to ask holders which blocks they really hold
     */
    private long scan(ConsistentHash ring, boolean check) throws IOException {
        Counts counts = new Counts();
        for (String key : node.store().keys("m-")) {
            if (!node.isRunning()) {
                break;
            }
            try {
                repairFile(key, ring, counts, check);
            } catch (IOException | RuntimeException e) {
                // One bad manifest must not stop the repair of every other file.
                counts.remaining++;
                if (failureLogged.add(key)) {
                    LOG.warn("[{}] replica repair of {} failed ({}); skipping it, repairing the rest", node.self().id(), key,
                            e.getMessage());
                }
            }
        }
        if (counts.repairedBlocks > 0 || counts.remaining > 0 || counts.copiedManifests > 0) {
            LOG.info("[{}] replica repair over a ring of {}: {} block(s) re-replicated or re-listed, {} manifest(s) "
                    + "copied to new holders, {} block(s) still under the replication factor", node.self().id(),
                    ring.size(), counts.repairedBlocks, counts.copiedManifests, counts.remaining);
        }
        return counts.remaining;
    }

    /** What one scan did. */
    private static final class Counts {
        long remaining;
        long repairedBlocks;
        long copiedManifests;
    }

    private void repairFile(String key, ConsistentHash ring, Counts counts, boolean check) throws IOException {
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
            // different view: the read may not have asked this node, so replace the copy here.
            RingStorage.await(node.put(node.self(), key, versions.newestCopy()));
            return;
        }
        if (versions.newest().isTombstone()) {
            return;
        }
        int replicationFactor = node.config().replicationFactor();
        int wanted = Math.min(versions.newest().copiesOr(replicationFactor), ring.size());
        List<Member> copies = inRingOrder(versions.holders(), key, ring);
        if (copies.isEmpty() || !copies.get(0).sameNode(node.self())) {
            // Another node repairs this file; until its rewrite reaches this copy, a short block
            // here is still work: this node scans again instead of calling itself clean.
            if (hasShortBlock(versions.newest(), wanted)) {
                counts.remaining++;
            }
            return;
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
                    : repair(manifest, block, live, ring, wanted, lostEverywhere ? lacking : null);
            boolean copied = repaired.size() > live.size();
            if (repaired.isEmpty() && lostEverywhere) {
                lostInCheck++;
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
            rewrite(key, rewritten, targets);
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
     * Stores a rewritten manifest on every target in parallel. A target that refuses it (a full
     * store) keeps its older copy, which readers rank below this one; the rewrite fails only if
     * fewer than the write quorum (or every target, if fewer) took it.
     */
    private void rewrite(String key, byte[] rewritten, List<Member> targets) throws IOException {
        List<CompletableFuture<Void>> puts = new ArrayList<>(targets.size());
        for (Member target : targets) {
            puts.add(node.put(target, key, rewritten));
        }
        int stored = 0;
        Map<String, String> refused = new LinkedHashMap<>();
        for (int i = 0; i < targets.size(); i++) {
            try {
                RingStorage.await(puts.get(i));
                stored++;
            } catch (IOException e) {
                refused.put(targets.get(i).id(), e.getMessage());
            }
        }
        if (stored < Math.min(node.storage().writeQuorum(), targets.size())) {
            throw new IOException("the rewritten manifest reached " + stored + " of " + targets.size() + " nodes: " + refused);
        }
        if (!refused.isEmpty() && failureLogged.add(key + " rewrite")) {
            LOG.info("[{}] replica repair rewrote {} on {} of {} nodes; these kept their older copy: {}",
                    node.self().id(), key, stored, targets.size(), refused);
        }
    }

    /**
     * Copies one block to new holders; returns the live holders afterwards.
     *
     * @param lostOn when every recorded holder answered that it lacks the block, what each said;
     *     the block is then looked for on every node, and reported as lost if none has it
     */
    private List<Member> repair(Manifest manifest, Manifest.BlockRef block, List<Member> live, ConsistentHash ring,
            int wanted, @Nullable Map<String, String> lostOn) {
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
            LOG.debug("[{}] could not read {} for repair: {}", node.self().id(), block.key(), e.getMessage());
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

    /**
     * Checks the manifests this node holds, without repairing anything: {blocks whose live holders
     * are fewer than {@code min(the file's copies, ring size)}, blocks whose two or more live
     * holders all sit in one zone although the ring spans several zones}. Manifests held by
     * several nodes are counted by each, so only zero is comparable across nodes. Safe to call
     * from any thread.
     */
    long[] audit() {
        ConsistentHash ring = node.membership().ring();
        java.util.Map<String, String> zones = new java.util.HashMap<>();
        for (Member m : ring.members()) {
            zones.put(m.nodeId(), m.effectiveZone());
        }
        boolean severalZones = new java.util.HashSet<>(zones.values()).size() > 1;
        long under = 0;
        long oneZone = 0;
        try {
            for (String key : node.store().keys("m-")) {
                Manifest manifest;
                try {
                    manifest = Manifest.decode(node.store().get(key), key);
                } catch (IOException e) {
                    continue;
                }
                int wanted = Math.min(manifest.copiesOr(node.config().replicationFactor()), ring.size());
                for (Manifest.BlockRef block : manifest.blocks()) {
                    java.util.Set<String> holderZones = new java.util.HashSet<>();
                    int live = 0;
                    for (Member holder : block.holders()) {
                        String zone = zones.get(holder.nodeId());
                        if (zone != null) {
                            live++;
                            holderZones.add(zone);
                        }
                    }
                    if (live < wanted) {
                        under++;
                    }
                    if (severalZones && live >= 2 && holderZones.size() == 1) {
                        oneZone++;
                    }
                }
            }
        } catch (IOException e) {
            return new long[] {-1, -1};
        }
        return new long[] {under, oneZone};
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
