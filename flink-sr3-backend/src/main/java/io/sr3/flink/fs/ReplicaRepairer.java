package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.Membership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
 * a short file another node repairs counts it as work until that rewrite reaches its copy, and
 * repairs the file itself once it has stayed short for {@link FileRepair#OWNER_GRACE} (at least
 * {@code sr3.repair.delay}): the owner may see it at full strength, or have called its last scan
 * clean before the short copy reached it. A
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
 * that {@code fsck} and readers name it. Scans between checks trust the manifests, except that a
 * file whose repair could not read a block from any live holder is checked at the next scan.
 *
 * <p>Joins need no work: readers find blocks through the holders a manifest records, so data
 * stays where it is and new writes use the new ring; ownership moves lazily and checkpoints are
 * never blocked.
 *
 * <p>A delete during a repair cannot bring the file back: the rewrite stores the generation after
 * the one it read, a tombstone takes a later one (or the same one, which tombstones win), and
 * every copy the repair writes replaces only a copy it outranks (a compare-and-put), so a
 * tombstone stored since the read stays and the repair reads the file again at its next scan.
 */
@NotThreadSafe
final class ReplicaRepairer implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaRepairer.class);
    static final String TASK_NAME = "replica-repair";

    private final RingNode node;
    private final long startedNanos;
    private final java.util.function.LongSupplier nanoClock;
    /** When the latest check scan started. */
    private long lastCheckNanos;
    /** Manifests and blocks whose failure was logged already: a scan repeats every interval, its log must not. */
    private final Set<String> failureLogged = new HashSet<>();
    private final Set<String> delayLogged = new HashSet<>();
    private final FileRepair fileRepair;
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
        this.fileRepair = new FileRepair(node, failureLogged, nanoClock);
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
            FileRepair.Counts counts = scan(node.membership().ring(), check);
            long remaining = counts.remaining;
            if (check) {
                lastCheckNanos = now;
                node.metrics().lostBlocks.set(counts.lost);
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
     * One pass over the local manifests; returns what it did, with the blocks still under the factor.
     *
     * @param check whether to ask holders which blocks they really hold
     */
    private FileRepair.Counts scan(ConsistentHash ring, boolean check) throws IOException {
        FileRepair.Counts counts = new FileRepair.Counts();
        for (String key : node.store().keys("m-")) {
            if (!node.isRunning()) {
                break;
            }
            try {
                fileRepair.repairFile(key, ring, counts, check);
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
        return counts;
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
}
