package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.RemoteException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Restores the replication factor after a member left: the self-healing of the ring.
 *
 * <p>Runs on one storage node's maintenance thread. A scan happens when the set of members
 * differs from the one of the last scan that found nothing to repair (so a steady ring costs
 * nothing), and repeats until a scan is clean. For each file manifest this node holds, the node
 * that repairs it is the first member in the manifest key's ring order that holds a copy, so
 * exactly one live node works on each file. For every block with fewer live holders than
 * {@code min(replication factor, ring size)} it reads a verified copy from a live holder, stores
 * it on the next placement targets that lack it, one block at a time (which bounds the rate to
 * what one node can copy sequentially), and then rewrites the manifest with the new holders on
 * its placement and on every node that held a copy, so no stale copy still names the dead node.
 * A manifest whose own copies fell under the factor is copied to its placement as well.
 *
 * <p>Joins need no work: readers find blocks through the holders a manifest records, so data
 * stays where it is and new writes use the new ring; ownership moves lazily and checkpoints are
 * never blocked.
 *
 * <p>Known window: if Flink deletes a file while its manifest is being rewritten, the rewrite can
 * bring back a manifest whose blocks are gone; the rewrite checks that the local copy still exists
 * first, which makes this window small but does not close it.
 */
@NotThreadSafe
final class ReplicaRepairer implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaRepairer.class);
    static final String TASK_NAME = "replica-repair";

    private final RingNode node;
    /** Members at the last scan that found nothing to repair; read by {@link #pending()} from any thread. */
    private volatile List<Member> cleanMembers;

    ReplicaRepairer(RingNode node) {
        this.node = node;
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
        if (members.equals(cleanMembers)) {
            return;
        }
        try {
            long remaining = scan(node.membership().ring());
            node.metrics().underReplicatedBlocks.set(remaining);
            node.metrics().repairScans.incrementAndGet();
            if (remaining == 0) {
                cleanMembers = members; // if members changed during the scan, pending() stays true
            }
        } catch (IOException e) {
            LOG.warn("[{}] replica repair scan stopped ({}); will scan again", node.self().id(), e.getMessage());
        }
    }

    /** One pass over the local manifests; returns the blocks still under the factor. */
    private long scan(ConsistentHash ring) throws IOException {
        int wanted = Math.min(node.config().replicationFactor(), ring.size());
        long remaining = 0;
        long repairedBlocks = 0;
        long copiedManifests = 0;
        for (String key : node.store().keys("m-")) {
            if (!node.isRunning()) {
                break;
            }
            byte[] encoded;
            try {
                encoded = node.store().get(key);
            } catch (IOException e) {
                continue; // deleted meanwhile, or corrupt (a reader will say so)
            }
            Manifest manifest = Manifest.decode(encoded, "manifest " + key + " on " + node.self().id());
            List<Member> copies = holdersOf(key, ring);
            if (copies.isEmpty() || !copies.get(0).sameNode(node.self())) {
                continue; // another node repairs this file
            }
            List<Manifest.BlockRef> blocks = new ArrayList<>(manifest.blocks().size());
            boolean changed = false;
            for (Manifest.BlockRef block : manifest.blocks()) {
                List<Member> live = new ArrayList<>();
                for (Member holder : block.holders()) {
                    if (node.membership().isLive(holder)) {
                        live.add(holder);
                    }
                }
                if (live.size() >= wanted) {
                    blocks.add(block);
                    continue;
                }
                List<Member> repaired = repair(manifest, block, live, ring, wanted);
                if (repaired.size() < wanted) {
                    remaining++;
                }
                if (repaired.size() > live.size() || live.size() < block.holders().size()) {
                    changed = true;
                    repairedBlocks++;
                }
                blocks.add(new Manifest.BlockRef(block.key(), block.length(), block.crc32c(), repaired));
            }
            List<Member> targets = new ArrayList<>(ring.placement(key, null, wanted));
            boolean manifestShort = false;
            for (Member target : targets) {
                if (!contains(copies, target)) {
                    manifestShort = true;
                }
            }
            if ((changed || manifestShort) && node.store().contains(key)) {
                byte[] rewritten = changed
                        ? new Manifest(manifest.path(), manifest.directory(), manifest.modificationTime(), manifest.length(),
                                blocks).encode()
                        : encoded;
                for (Member copy : copies) {
                    if (!contains(targets, copy)) {
                        targets.add(copy);
                    }
                }
                for (Member target : targets) {
                    RingStorage.await(node.put(target, key, rewritten));
                }
                if (manifestShort) {
                    copiedManifests++;
                }
            }
        }
        if (repairedBlocks > 0 || remaining > 0 || copiedManifests > 0) {
            LOG.info("[{}] replica repair over a ring of {}: {} block(s) re-replicated or re-listed, {} manifest(s) "
                    + "copied to new holders, {} block(s) still under the replication factor", node.self().id(),
                    ring.size(), repairedBlocks, copiedManifests, remaining);
        }
        return remaining;
    }

    /** Copies one block to new holders; returns the live holders afterwards. */
    private List<Member> repair(Manifest manifest, Manifest.BlockRef block, List<Member> live, ConsistentHash ring,
            int wanted) {
        List<Member> holders = new ArrayList<>(live);
        if (live.isEmpty()) {
            LOG.warn("[{}] block {} of {} has no live replica left; it cannot be repaired", node.self().id(), block.key(),
                    manifest.path());
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
        for (Member target : ring.placement(block.key(), null, ring.size())) {
            if (holders.size() >= wanted) {
                break;
            }
            if (contains(holders, target)) {
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
     * are fewer than {@code min(replication factor, ring size)}, blocks whose two or more live
     * holders all sit in one zone although the ring spans several zones}. Manifests held by
     * several nodes are counted by each, so only zero is comparable across nodes. Safe to call
     * from any thread.
     */
    long[] audit() {
        ConsistentHash ring = node.membership().ring();
        int wanted = Math.min(node.config().replicationFactor(), ring.size());
        java.util.Map<String, String> zones = new java.util.HashMap<>();
        for (Member m : ring.members()) {
            zones.put(m.id(), m.effectiveZone());
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
                for (Manifest.BlockRef block : manifest.blocks()) {
                    java.util.Set<String> holderZones = new java.util.HashSet<>();
                    int live = 0;
                    for (Member holder : block.holders()) {
                        String zone = zones.get(holder.id());
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

    /** The live members that hold a copy of {@code key}, in the key's ring order. */
    private List<Member> holdersOf(String key, ConsistentHash ring) {
        List<Member> holders = new ArrayList<>();
        for (Member member : ring.successors(key)) {
            if (member.sameNode(node.self())) {
                holders.add(member);
                continue;
            }
            try {
                RingStorage.await(node.get(member, key));
                holders.add(member);
            } catch (IOException e) {
                if (!isNotFound(e)) {
                    LOG.debug("[{}] could not ask {} about {}: {}", node.self().id(), member.id(), key, e.getMessage());
                }
            }
        }
        return holders;
    }

    private static boolean isNotFound(IOException e) {
        return e instanceof BlockNotFoundException
                || (e instanceof RemoteException remote && remote.code() == ErrorCode.NOT_FOUND);
    }

    private static boolean contains(List<Member> members, Member member) {
        for (Member m : members) {
            if (m.sameNode(member)) {
                return true;
            }
        }
        return false;
    }
}
