package io.sr3.flink.node;

import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;
import io.sr3.flink.transport.RemoteException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Replicated reads and writes of keyed blobs (blocks and manifests) over the ring.
 *
 * <p><b>Writes</b> go to the first {@code replication factor} nodes of the key's placement,
 * suspected nodes last; a replica that fails is replaced by the next node in ring order. A write
 * succeeds once {@link #writeQuorum} distinct nodes ({@code sr3.ring.min-replicas}) acknowledged
 * it, and fails with a {@link WriteQuorumException} otherwise: nothing is acknowledged below the
 * quorum. Only a ring that runs entirely in this JVM without seeds (a MiniCluster, a local run,
 * where every copy shares one disk anyway) lowers the quorum to its size, and says so once.
 *
 * <p><b>Reads</b> of blobs whose length and checksum are known try the known holders first (this
 * node before others, so local recovery is free), then the rest of the ring, and verify each
 * copy: a corrupt or missing replica is logged and skipped, never returned. Reads by key alone
 * ({@link #readCopies}) ask every reachable node in parallel and return every copy found, so the
 * caller can pick the newest; a key is reported absent only when enough nodes answered that no
 * quorum-written copy can hide on the others, and unavailable ({@link
 * ReplicasUnreachableException}) when it might.
 *
 * <p>The blocking methods throw {@link IllegalStateException} on the node's own network threads
 * instead of waiting there forever; callbacks of the returned futures, which those threads run,
 * use the asynchronous methods.
 */
@ThreadSafe
public final class RingStorage {

    private static final Logger LOG = LoggerFactory.getLogger(RingStorage.class);

    private final RingNode node;
    private final ReplicaOrder order;
    private final AtomicBoolean smallRingWarned = new AtomicBoolean();

    RingStorage(RingNode node) {
        this.node = node;
        this.order = new ReplicaOrder(node);
    }

    /**
     * The distinct acknowledgements a write needs: {@code sr3.ring.min-replicas}, or the ring's
     * size when the ring is one process's own (no seeds, every member in this JVM) and smaller.
     */
    public int writeQuorum() {
        ConsistentHash ring = node.membership().ring();
        int minReplicas = node.config().durability().minReplicas();
        if (ring.size() < minReplicas && isSingleProcessRing(ring)) {
            return Math.max(1, ring.size());
        }
        return minReplicas;
    }

    /** Whether every member runs in this JVM and no seeds point elsewhere: a MiniCluster or a local run. */
    private boolean isSingleProcessRing(ConsistentHash ring) {
        if (!node.config().seeds().isEmpty()) {
            return false;
        }
        List<Member> local = LocalRing.members();
        for (Member member : ring.members()) {
            if (!member.isIn(local)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Writes a blob to its replicas.
     *
     * @param writerFirst whether this node should hold the first replica (true for data blocks,
     *     false for manifests, which readers find by key alone)
     * @return the nodes that acknowledged, in placement order; fails with a {@link
     *     WriteQuorumException} when fewer than {@link #writeQuorum} did
     */
    public CompletableFuture<List<Member>> write(String key, byte[] data, boolean writerFirst) {
        return write(key, data, Crc32c.of(data), writerFirst);
    }

    /** {@link #write(String, byte[], boolean)} of data whose CRC32C the caller computed already. */
    public CompletableFuture<List<Member>> write(String key, byte[] data, int crc32c, boolean writerFirst) {
        return write(key, ByteBuffer.wrap(data), crc32c, writerFirst, node.config().replicationFactor(), null);
    }

    /**
     * {@link #write(String, byte[], int, boolean)} of the bytes between {@code data}'s position
     * and limit (which stay; a block array filled only in part is written without a copy),
     * aiming for {@code copies} replicas instead of the replication factor (a file whose
     * operator's replication plan says so); the quorum is the same. {@code release}, if given,
     * runs once every copy the write started was acknowledged: then nothing reads {@code data}
     * any more (each node answered after it received all of it) and the caller may reuse the
     * array; not when a copy failed (a timed-out request may still be sending it) or the write
     * never started.
     */
    public CompletableFuture<List<Member>> write(String key, ByteBuffer data, int crc32c, boolean writerFirst,
            int copies, @Nullable Runnable release) {
        ConsistentHash ring = node.membership().ring();
        int quorum = writeQuorum();
        int wanted = wantedCopies(copies);
        if (wanted < copies && smallRingWarned.compareAndSet(false, true)) {
            LOG.warn("[{}] the ring has {} member(s) but {} copies are wanted (sr3.ring.replication-factor {}): data "
                    + "is stored with {} cop{} until more nodes join", node.self().id(), ring.size(), copies,
                    node.config().replicationFactor(), wanted, wanted == 1 ? "y" : "ies");
        }
        List<Member> targets = order.suspectedLast(ring.placement(key, writerFirst ? node.self() : null, ring.size()));
        if (targets.size() < quorum) {
            List<String> members = new ArrayList<>();
            for (Member m : targets) {
                members.add(m.id());
            }
            node.metrics().failedWrites.incrementAndGet();
            return CompletableFuture.failedFuture(new WriteQuorumException(key, quorum, List.of(),
                    Map.of("ring", "only " + members + " are members"), targets.size()));
        }
        return new ReplicatedWrite(node, key, data, crc32c, wanted, quorum, writerFirst, targets, release).start();
    }

    /** How many copies a write aims for: the replication factor, fewer in a smaller ring, never below the quorum. */
    public int wantedCopies() {
        return wantedCopies(node.config().replicationFactor());
    }

    /** How many copies a write that asks for {@code copies} aims for: fewer in a smaller ring, never below the quorum. */
    public int wantedCopies(int copies) {
        return Math.max(writeQuorum(), Math.min(copies, node.membership().ring().size()));
    }

    /** The nodes a write of {@code key} without a preferred writer asks, in order: placement first, suspected last. */
    public List<Member> writeOrder(String key) {
        ConsistentHash ring = node.membership().ring();
        return order.suspectedLast(ring.placement(key, null, ring.size()));
    }

    /** Blocking form of {@link #write}. */
    public List<Member> writeAndWait(String key, byte[] data, boolean writerFirst) throws IOException {
        requireBlockingAllowed("writing " + key);
        return await(write(key, data, writerFirst));
    }

    /**
     * Reads a blob whose length and checksum are known, falling back over replicas.
     *
     * @param holders the nodes recorded as holding it, tried first
     * @param description what the blob is, for error messages (file path and block index)
     * @throws BlockUnavailableException if no node returned an intact copy
     */
    public byte[] readVerified(String key, int length, int crc32c, List<Member> holders, String description)
            throws IOException {
        requireBlockingAllowed("reading " + description);
        Map<String, String> failures = new LinkedHashMap<>();
        for (Member candidate : order.forRead(key, holders)) {
            try {
                byte[] data = await(node.getVerified(candidate, key, length, crc32c));
                account(candidate, data.length, !failures.isEmpty());
                return data;
            } catch (InterruptedIOException e) {
                throw e; // the task is being cancelled: stop, do not try other replicas
            } catch (IOException e) {
                failures.put(candidate.id(), e.getMessage());
            }
            LOG.warn("[{}] {}: replica {} on {} unusable ({}); trying the next replica",
                    node.self().id(), description, key, candidate.id(), failures.get(candidate.id()));
        }
        throw new BlockUnavailableException(description, key, failures);
    }

    /** A stream's read-ahead: starts reading from the first replica {@link #readVerified} would ask; see {@link #finishRead}. */
    public CompletableFuture<byte[]> startRead(String key, int length, int crc32c, List<Member> holders) {
        List<Member> candidates = order.forRead(key, holders);
        if (candidates.isEmpty()) {
            return CompletableFuture.failedFuture(new IOException("no live holder of " + key));
        }
        Member first = candidates.get(0);
        CompletableFuture<byte[]> read = node.getVerified(first, key, length, crc32c);
        read.thenAccept(data -> account(first, data.length, false));
        return read;
    }

    /** Waits for a read {@link #startRead} began; if that replica failed, reads as {@link #readVerified}, over every replica. */
    public byte[] finishRead(CompletableFuture<byte[]> started, String key, int length, int crc32c, List<Member> holders,
            String description) throws IOException {
        requireBlockingAllowed("reading " + description);
        try {
            return await(started);
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            LOG.debug("[{}] read-ahead of {} failed: {}", node.self().id(), description, e.getMessage());
            return readVerified(key, length, crc32c, holders, description);
        }
    }

    /** One node's copy of a blob read by key alone. */
    public record Copy(Member holder, byte[] data) {}

    /**
     * Reads every copy of a blob by key alone (manifests), asking every member that is not
     * suspected in parallel. The answer is complete once every asked node answered, or earlier once
     * a copy was found and the key's first {@code replication factor} placement nodes answered
     * (writes go there first, so the newest version is among them).
     *
     * <p>An empty list means the key is absent for certain: at least {@code known - quorum + 1}
     * nodes answered that they do not hold it, where {@code known} counts the members (suspected
     * ones included) and those removed within {@code sr3.repair.delay} plus the failure detector's
     * timeout (they may come back with their disks; see {@link ParallelRead#readCopiesAsync}), so no
     * copy written to a quorum can be on the others.
     *
     * @throws ReplicasUnreachableException if the key may be held only by nodes that could not be
     *     asked: unavailable, not absent
     */
    public List<Copy> readCopies(String key, String description) throws IOException {
        return readCopies(key, description, false);
    }

    /** {@link #readCopies(String, String)} without waiting: completes on a network thread, failing as it throws. */
    public CompletableFuture<List<Copy>> readCopiesAsync(String key, String description) {
        return readCopiesAsync(key, description, false);
    }

    /**
     * Like {@link #readCopies(String, String)}, but waits for every asked node: for repair, whose
     * rewrite must reach every copy, also those outside the key's placement.
     */
    public List<Copy> readEveryCopy(String key, String description) throws IOException {
        return readCopies(key, description, true);
    }

    private List<Copy> readCopies(String key, String description, boolean everyNode) throws IOException {
        requireBlockingAllowed("reading " + description);
        return await(readCopiesAsync(key, description, everyNode));
    }

    private CompletableFuture<List<Copy>> readCopiesAsync(String key, String description, boolean everyNode) {
        return ParallelRead.readCopiesAsync(node, key, description, everyNode).thenApply(copies -> {
            copies.forEach(copy -> account(copy.holder(), copy.data().length, false));
            return copies;
        });
    }

    /**
     * Reads one copy of a blob by key alone, for status blobs that carry their own time (pacer
     * status, restore rates) and have no versions: any copy will do.
     *
     * @return a copy, or null if the key is absent for certain (see {@link #readCopies})
     */
    @Nullable
    public byte[] readAny(String key, String description) throws IOException {
        List<Copy> copies = readCopies(key, description);
        return copies.isEmpty() ? null : copies.get(0).data();
    }

    /**
     * Deletes a blob on the given nodes, and on every live node when {@code holders} is null. Best
     * effort: holders that are not live are skipped rather than waited for (Flink deletes
     * subsumed checkpoints on the JobManager's main thread), and their copies stay behind as
     * orphans.
     *
     * @throws IllegalStateException when called on one of this node's network threads, which
     *     would wait for an answer only that thread can read
     */
    public void deleteOn(String key, @Nullable List<Member> holders) {
        requireBlockingAllowed("deleting " + key);
        deleteOnAsync(key, holders).join();
    }

    /**
     * {@link #deleteOn} without waiting: safe from any thread, including a callback that a network
     * thread runs when a write completes. The future completes when every delete was answered or
     * failed; it never fails itself.
     */
    public CompletableFuture<Void> deleteOnAsync(String key, @Nullable List<Member> holders) {
        List<Member> targets = new ArrayList<>();
        for (Member target : holders != null ? holders : node.membership().members()) {
            if (node.membership().isLive(target)) {
                targets.add(target);
            }
        }
        List<CompletableFuture<Void>> deletes = new ArrayList<>(targets.size());
        for (Member target : targets) {
            deletes.add(node.delete(target, key).exceptionally(e -> {
                LOG.debug("[{}] could not delete {} on {}: {}", node.self().id(), key, target.id(), e.getMessage());
                return null;
            }));
        }
        return CompletableFuture.allOf(deletes.toArray(new CompletableFuture[0]));
    }

    /**
     * Blocking on one of this node's network threads deadlocks it: the answer waited for arrives
     * on a connection that thread serves, and every other connection it serves stops too.
     */
    private void requireBlockingAllowed(String what) {
        if (node.onNetworkThread()) {
            throw new IllegalStateException("[" + node.self().id() + "] " + what + " would block the ring's network "
                    + "thread " + Thread.currentThread().getName() + " until an answer that only this thread can read: "
                    + "use the asynchronous variant from callbacks");
        }
    }

    /** Every key under a prefix on any live node, with one node that holds it. */
    public Map<String, Member> listEverywhere(String prefix) throws IOException {
        requireBlockingAllowed("listing " + prefix);
        Map<String, Member> found = new LinkedHashMap<>();
        Map<String, String> failures = new LinkedHashMap<>();
        for (Member member : node.membership().members()) {
            try {
                for (String key : await(node.list(member, prefix))) {
                    found.putIfAbsent(key, member);
                }
            } catch (IOException e) {
                failures.put(member.id(), e.getMessage());
            }
        }
        if (!failures.isEmpty()) {
            LOG.warn("[{}] listing {} skipped unreachable nodes: {}", node.self().id(), prefix, failures);
        }
        return found;
    }

    /**
     * Asks one node whether it holds intact copies of {@code blocks}, from their headers alone
     * (see {@link BlockStore#presence}): one {@link MessageType#CHECK_BLOCKS} request per {@value
     * Payloads#MAX_CHECKED_BLOCKS} blocks, and no block data read or sent. This node's own store
     * is asked directly, on the calling thread.
     *
     * @return one entry per block, in order; fails (in the future) when the node does not answer
     */
    public CompletableFuture<List<BlockStore.Presence>> checkBlocks(Member target, List<Payloads.ExpectedBlock> blocks) {
        return BlockPresenceCheck.ask(node, target, blocks);
    }

    /** Whether a node answered that it does not hold a key, locally or over the wire. */
    static boolean isNotFound(IOException e) {
        return e instanceof BlockNotFoundException
                || (e instanceof RemoteException remote && remote.code() == ErrorCode.NOT_FOUND);
    }

    private void account(Member source, int bytes, boolean fellBack) {
        NodeMetrics metrics = node.metrics();
        metrics.bytesRead.addAndGet(bytes);
        if (!source.sameNode(node.self())) {
            metrics.bytesReadRemote.addAndGet(bytes);
        }
        if (fellBack) {
            metrics.replicaFallbacks.incrementAndGet();
        }
    }


    /**
     * Waits for a future, unwrapping the I/O failure it carries. An interrupted thread gets an
     * {@link InterruptedIOException} even when the future has already completed, as from any
     * blocking call: whether the wait was needed must not decide whether a cancellation is seen
     * (a checkpoint stream that Flink cancelled would otherwise publish its file or discard it
     * depending on whether its last write had landed before the close asked).
     */
    public static <T> T await(CompletableFuture<T> future) throws IOException {
        try {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("Interrupted while waiting for the sr3 ring");
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException(String.valueOf(cause), cause);
        }
    }
}
