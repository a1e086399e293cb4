package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.node.WriteQuorumException;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The versioned manifests of the ring: reads return the newest copy, changes store a higher
 * generation, deletes store tombstones.
 *
 * <p>A read asks every reachable node (see {@link RingStorage#readCopies}), decodes each copy,
 * skips and counts undecodable ones, and returns the newest copy ({@link Manifest#NEWEST}, ties
 * broken by the copy's bytes, so every reader picks the same one); every other copy that differs
 * from it, an older generation or a same-generation copy two repairers wrote with different
 * views, is overwritten with it in the background (read repair) unless that node stored a copy
 * that outranks it since the read, so a node that was away while a path changed or was deleted
 * catches up the first time anyone reads it.
 * Undecodable copies are logged and counted once per key and instance. Block holders are returned
 * at their current addresses: a holder that restarted elsewhere with its store is still a holder.
 */
@ThreadSafe
final class ManifestStore {

    private static final Logger LOG = LoggerFactory.getLogger(ManifestStore.class);

    /** Compare-and-puts of one conditional write before it gives up on a copy that keeps changing. */
    private static final int CONDITIONAL_PUT_ATTEMPTS = 4;

    private final RingNode node;
    /** Keys whose undecodable copies were reported already: a long-lived store (repair, sweep) reports each once. */
    private final Set<String> reportedCorrupt = ConcurrentHashMap.newKeySet();

    ManifestStore(RingNode node) {
        this.node = node;
    }

    /**
     * The newest manifest of a path (holders at their current addresses), the bytes of that copy as
     * stored, and the nodes that answered with a copy of it.
     */
    record Versions(Manifest newest, byte[] newestCopy, List<Member> holders) {}

    /**
     * The newest copy under a manifest key, tombstones included, or null if the key is absent for
     * certain.
     *
     * @throws io.sr3.flink.node.ReplicasUnreachableException if nodes that may hold it cannot be asked
     * @throws IOException if copies exist but none decodes
     */
    @Nullable
    Versions read(String manifestKey, String description) throws IOException {
        return versions(manifestKey, description, node.storage().readCopies(manifestKey, description));
    }

    /**
     * {@link #read} without waiting: the stored copies are decoded (and stale ones repaired in the
     * background) on the network thread that completes the read.
     */
    CompletableFuture<Versions> readAsync(String manifestKey, String description) {
        return node.storage().readCopiesAsync(manifestKey, description).thenApply(copies -> {
            try {
                return versions(manifestKey, description, copies);
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        });
    }

    /** Like {@link #read}, but from every reachable node, so {@link Versions#holders()} lists every copy: for repair. */
    @Nullable
    Versions readEvery(String manifestKey, String description) throws IOException {
        return versions(manifestKey, description, node.storage().readEveryCopy(manifestKey, description));
    }

    @Nullable
    private Versions versions(String manifestKey, String description, List<RingStorage.Copy> copies) throws IOException {
        if (copies.isEmpty()) {
            return null;
        }
        Map<Member, Manifest> decoded = new LinkedHashMap<>();
        Map<Member, byte[]> stored = new LinkedHashMap<>();
        Map<String, String> corrupt = new LinkedHashMap<>();
        for (RingStorage.Copy copy : copies) {
            try {
                decoded.put(copy.holder(), Manifest.decode(copy.data(), description + " on " + copy.holder().id()));
                stored.put(copy.holder(), copy.data());
            } catch (IOException e) {
                corrupt.put(copy.holder().id(), e.getMessage());
            }
        }
        if (!corrupt.isEmpty() && reportedCorrupt.add(manifestKey)) {
            node.metrics().corruptManifests.incrementAndGet();
            LOG.warn("[{}] {}: skipping {} undecodable cop{} ({}): {}", node.self().id(), description, corrupt.size(),
                    corrupt.size() == 1 ? "y" : "ies", manifestKey, corrupt);
        }
        if (decoded.isEmpty()) {
            throw new IOException("Every copy of " + description + " (" + manifestKey + ") is corrupt: " + corrupt);
        }
        Member winner = null;
        for (Member holder : decoded.keySet()) {
            if (winner == null || isNewer(decoded.get(holder), stored.get(holder), decoded.get(winner), stored.get(winner))) {
                winner = holder;
            }
        }
        Manifest newest = decoded.get(winner);
        byte[] newestCopy = stored.get(winner);
        for (Map.Entry<Member, byte[]> entry : stored.entrySet()) {
            if (!Arrays.equals(entry.getValue(), newestCopy)) {
                Member stale = entry.getKey();
                putUnlessOutranked(stale, manifestKey, newestCopy, entry.getValue()).whenComplete((ignored, error) -> {
                    if (error != null) {
                        LOG.debug("[{}] read repair of {} on {} failed: {}", node.self().id(), manifestKey, stale.id(),
                                error.getMessage());
                    }
                });
            }
        }
        List<Member> holders = new ArrayList<>(decoded.keySet());
        return new Versions(newest.withHolders(node.membership()::current), newestCopy, holders);
    }

    /**
     * Whether copy {@code a} outranks copy {@code b}: {@link Manifest#NEWEST}, then the stored bytes,
     * a total order, so readers with different answers converge on one copy.
     */
    static boolean isNewer(Manifest a, byte[] aCopy, Manifest b, byte[] bCopy) {
        int byVersion = Manifest.NEWEST.compare(a, b);
        return byVersion != 0 ? byVersion > 0 : Arrays.compareUnsigned(aCopy, bCopy) > 0;
    }

    /** The newest manifest of a path, or null if it does not exist (never written, or deleted). */
    @Nullable
    Manifest live(String path, String description) throws IOException {
        Versions versions = read(NamespaceKeys.manifestKey(path), description);
        return versions == null || versions.newest().isTombstone() ? null : versions.newest();
    }

    /** Stores a manifest on a write quorum of its placement. */
    void write(Manifest manifest) throws IOException {
        node.storage().writeAndWait(NamespaceKeys.manifestKey(manifest.path()), manifest.encode(), false);
    }

    /** {@link #write} without waiting. */
    CompletableFuture<List<Member>> writeAsync(Manifest manifest) {
        return node.storage().write(NamespaceKeys.manifestKey(manifest.path()), manifest.encode(), false);
    }

    /**
     * Stores the manifest of a new file only if its path still holds what {@code observed} found
     * there (or this very manifest): the exclusive create behind NO_OVERWRITE, atomic while the
     * creators' views of the ring agree. The nodes of the key's write order are asked one at a
     * time with a compare-and-put, so the first that answers arbitrates: of two creators racing
     * for a path it holds the first one's manifest when the second asks, and the second fails
     * having stored nothing. A copy older than the observed one, a tombstone or garbage is stale
     * and is replaced; a newer live manifest (another writer's file or directory) is a conflict.
     * A conflict, or fewer acknowledgements than the write quorum, puts back what this create
     * stored and fails.
     *
     * @param observed what the path held when the file was opened; null if nothing
     * @return the nodes that store the manifest
     * @throws FileAlreadyExistsException if another writer created the path meanwhile
     * @throws io.sr3.flink.node.WriteQuorumException if fewer nodes than the quorum stored it
     */
    List<Member> create(Manifest manifest, @Nullable Versions observed, String displayPath) throws IOException {
        String key = NamespaceKeys.manifestKey(manifest.path());
        byte[] proposed = manifest.encode();
        byte[] expected = observed == null ? null : observed.newestCopy();
        int wanted = node.storage().wantedCopies(manifest.manifestCopies(node.config().replicationFactor()));
        int quorum = node.storage().writeQuorum();
        List<Member> stored = new ArrayList<>();
        Map<String, String> failures = new LinkedHashMap<>();
        for (Member target : node.storage().writeOrder(key)) {
            if (stored.size() >= wanted) {
                break;
            }
            try {
                claim(target, key, expected, proposed, displayPath);
                stored.add(target);
            } catch (FileAlreadyExistsException | InterruptedIOException e) {
                putBack(key, proposed, expected, stored);
                throw e;
            } catch (IOException e) {
                failures.put(target.id(), e.getMessage());
            }
        }
        if (stored.size() < quorum) {
            putBack(key, proposed, expected, stored);
            node.metrics().failedWrites.incrementAndGet();
            List<String> ids = new ArrayList<>();
            for (Member m : stored) {
                ids.add(m.id());
            }
            throw new WriteQuorumException(key, quorum, ids, failures, node.membership().members().size());
        }
        if (stored.size() < wanted) {
            node.metrics().underReplicatedWrites.incrementAndGet();
            LOG.warn("[{}] {} is stored on {} node(s) instead of {} (the write quorum is {}): {}", node.self().id(), key,
                    stored.size(), wanted, quorum, failures);
        }
        node.metrics().bytesWritten.addAndGet((long) proposed.length * stored.size());
        return stored;
    }

    /** One node's compare-and-put for {@link #create}; a stale copy found there is replaced (a few times at most). */
    private void claim(Member target, String key, @Nullable byte[] expected, byte[] proposed, String displayPath)
            throws IOException {
        byte[] assumed = expected;
        for (int attempt = 0; attempt < 3; attempt++) {
            CompletableFuture<BlockStore.Swap> swap = node.compareAndPut(target, key, assumed, proposed);
            BlockStore.Swap result;
            try {
                result = RingStorage.await(swap);
            } catch (InterruptedIOException e) {
                // The request may still land: take it back once it has.
                byte[] previous = assumed;
                swap.thenAccept(landed -> {
                    if (landed.swapped()) {
                        putBack(key, proposed, previous, List.of(target));
                    }
                });
                throw e;
            }
            if (result.swapped()) {
                return;
            }
            if (isLiveAndNewer(result.found(), expected)) {
                throw new FileAlreadyExistsException(displayPath, null,
                        "created by another writer while this one was writing (NO_OVERWRITE; " + target.id() + " holds it)");
            }
            assumed = result.found();
        }
        throw new IOException("its copy of " + key + " changed during each of 3 compare-and-puts");
    }

    /**
     * Stores {@code copy} of a manifest on {@code target} unless the target holds a copy that
     * outranks it ({@link #isNewer}), with compare-and-puts: the conditional write of every copy
     * made from an earlier read (read repair, replica repair's rewrite, a tombstone for a holder).
     * A blind put there could replace a tombstone or a newer manifest stored since the read, and
     * once every copy of a tombstone is replaced, a deleted file is back, its blocks gone.
     *
     * @param assumed what the target is believed to hold (null: nothing); a wrong guess costs one
     *     more round trip
     * @return true once the target holds {@code copy}; false if it holds a copy that outranks it
     */
    CompletableFuture<Boolean> putUnlessOutranked(Member target, String key, byte[] copy, @Nullable byte[] assumed) {
        return putUnlessOutranked(target, key, copy, assumed, CONDITIONAL_PUT_ATTEMPTS);
    }

    private CompletableFuture<Boolean> putUnlessOutranked(Member target, String key, byte[] copy,
            @Nullable byte[] assumed, int attempts) {
        return node.compareAndPut(target, key, assumed, copy).thenCompose(swap -> {
            if (swap.swapped()) {
                return CompletableFuture.completedFuture(true);
            }
            if (!outranks(copy, swap.found())) {
                return CompletableFuture.completedFuture(false);
            }
            if (attempts <= 1) {
                return CompletableFuture.failedFuture(new IOException("the copy of " + key + " on " + target.id()
                        + " changed during each of " + CONDITIONAL_PUT_ATTEMPTS + " compare-and-puts"));
            }
            return putUnlessOutranked(target, key, copy, swap.found(), attempts - 1);
        });
    }

    /** Whether {@code copy} may replace {@code found}: nothing, an undecodable copy, or a copy it outranks. */
    private static boolean outranks(byte[] copy, @Nullable byte[] found) {
        if (found == null) {
            return true;
        }
        Manifest existing;
        try {
            existing = Manifest.decode(found, "a found copy");
        } catch (IOException e) {
            return true; // garbage: replaceable
        }
        try {
            return isNewer(Manifest.decode(copy, "the copy to store"), copy, existing, found);
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether {@code found} is a file or directory manifest that outranks {@code observed} (or there was none). */
    private static boolean isLiveAndNewer(@Nullable byte[] found, @Nullable byte[] observed) {
        if (found == null) {
            return false;
        }
        Manifest manifest;
        try {
            manifest = Manifest.decode(found, "a found copy");
        } catch (IOException e) {
            return false; // garbage: replaceable
        }
        if (manifest.isTombstone()) {
            return false;
        }
        if (observed == null) {
            return true;
        }
        try {
            return isNewer(manifest, found, Manifest.decode(observed, "the observed copy"), observed);
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * Takes a manifest back from {@code holders} (null: every member) in the background: where the
     * key still holds {@code ours}, it gets {@code previous} again (null: nothing). Another
     * writer's manifest under the key is never touched.
     */
    void putBack(String key, byte[] ours, @Nullable byte[] previous, @Nullable List<Member> holders) {
        for (Member holder : holders != null ? holders : node.membership().members()) {
            node.compareAndPut(holder, key, ours, previous).whenComplete((swap, error) -> {
                if (error != null) {
                    LOG.info("[{}] could not take back {} on {} ({}); the orphan sweep removes what a failed write left",
                            node.self().id(), key, holder.id(), error.getMessage());
                }
            });
        }
    }

    /**
     * Deletes a path: stores a tombstone of a higher generation on a write quorum of the path's
     * placement and over every copy the read found, so no node still holding the old manifest can
     * bring the path back.
     */
    void delete(Manifest existing, List<Member> holders) throws IOException {
        Manifest tombstone = Manifest.tombstone(existing.path(),
                Manifest.nextGeneration(existing.generation(), System.currentTimeMillis()), System.currentTimeMillis());
        String key = NamespaceKeys.manifestKey(existing.path());
        byte[] encoded = tombstone.encode();
        List<Member> stored = node.storage().writeAndWait(key, encoded, false);
        for (Member holder : holders) {
            if (!holder.isIn(stored) && node.membership().isLive(holder)) {
                // Best effort: a copy missed here is overwritten by the read repair of the next read.
                putUnlessOutranked(holder, key, encoded, null).whenComplete((ignored, error) -> {
                    if (error != null) {
                        LOG.debug("[{}] could not overwrite {} on {} with its tombstone: {}", node.self().id(), key,
                                holder.id(), error.getMessage());
                    }
                });
            }
        }
    }
}
