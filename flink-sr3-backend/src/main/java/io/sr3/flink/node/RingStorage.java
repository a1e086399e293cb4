package io.sr3.flink.node;

import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.RemoteException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;

/**
 * Replicated reads and writes of keyed blobs (blocks and manifests) over the ring.
 *
 * <p>Writes go to the placement of the key; a replica that fails is replaced by the next node in
 * ring order, and a write succeeds once {@code min(replication factor, ring size)} nodes hold the
 * blob. Reads try the known holders first (this node before others, so local recovery is free),
 * then the rest of the ring in order, and verify length and CRC32C against what the caller
 * expects: a corrupt or missing replica is logged and skipped, never returned.
 *
 * <p>The blocking methods throw {@link IllegalStateException} on the node's own network threads
 * instead of waiting there forever; callbacks of the returned futures, which those threads run,
 * use the asynchronous methods.
 */
@ThreadSafe
public final class RingStorage {

    private static final Logger LOG = LoggerFactory.getLogger(RingStorage.class);

    private final RingNode node;
    private final AtomicBoolean smallRingWarned = new AtomicBoolean();

    RingStorage(RingNode node) {
        this.node = node;
    }

    /**
     * Writes a blob to its replicas.
     *
     * @param writerFirst whether this node should hold the first replica (true for data blocks,
     *     false for manifests, which readers find by key alone)
     * @return the nodes that acknowledged, in placement order
     */
    public CompletableFuture<List<Member>> write(String key, byte[] data, boolean writerFirst) {
        ConsistentHash ring = node.membership().ring();
        int wanted = Math.min(node.config().replicationFactor(), ring.size());
        if (wanted < node.config().replicationFactor() && smallRingWarned.compareAndSet(false, true)) {
            LOG.warn("[{}] the ring has {} member(s) but sr3.ring.replication-factor is {}: data is stored with fewer "
                    + "replicas until more nodes join", node.self().id(), ring.size(), node.config().replicationFactor());
        }
        List<Member> order = ring.placement(key, writerFirst ? node.self() : null, ring.size());
        return new ReplicatedWrite(key, data, wanted, order).start();
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
        for (Member candidate : readOrder(key, holders)) {
            try {
                byte[] data = await(node.get(candidate, key));
                String problem = check(data, length, crc32c);
                if (problem == null) {
                    account(candidate, data.length, !failures.isEmpty());
                    return data;
                }
                failures.put(candidate.id(), problem);
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

    /**
     * Reads a blob by key alone (manifests): the first copy found in ring order wins.
     *
     * <p>Unreachable nodes do not make the key unknowable: once at least {@code min(replication
     * factor, ring size)} nodes answered that they do not hold it, it is absent. Otherwise a node
     * that is down but not yet out of placement would fail every lookup until the failure
     * detector removes it.
     *
     * @return the blob, or null if it is absent
     * @throws BlockUnavailableException if too few nodes could be asked to tell
     */
    @Nullable
    public byte[] readAny(String key, String description) throws IOException {
        requireBlockingAllowed("reading " + description);
        Map<String, String> failures = new LinkedHashMap<>();
        ConsistentHash ring = node.membership().ring();
        int notFound = 0;
        for (Member candidate : ring.successors(key)) {
            try {
                byte[] data = await(node.get(candidate, key));
                account(candidate, data.length, false);
                return data;
            } catch (InterruptedIOException e) {
                throw e;
            } catch (IOException e) {
                if (isNotFound(e)) {
                    notFound++;
                } else {
                    failures.put(candidate.id(), e.getMessage());
                }
            }
        }
        if (notFound >= Math.min(node.config().replicationFactor(), ring.size())) {
            if (!failures.isEmpty()) {
                LOG.info("[{}] {} is on none of the {} nodes that answered; unreachable: {}",
                        node.self().id(), description, notFound, failures);
            }
            return null;
        }
        throw new BlockUnavailableException(description, key, failures);
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

    /** Reads of one blob, by a holder or any node, as tried by {@link #readVerified}. */
    private List<Member> readOrder(String key, List<Member> holders) {
        List<Member> order = new ArrayList<>();
        Member self = node.self();
        for (Member h : holders) {
            if (h.sameNode(self)) {
                order.add(self);
            }
        }
        for (Member h : holders) {
            if (!contains(order, h) && node.membership().isLive(h)) {
                order.add(h);
            }
        }
        for (Member m : node.membership().ring().successors(key)) {
            if (!contains(order, m)) {
                order.add(m);
            }
        }
        // Holders that left the ring are tried last: a node may be back before the detector noticed.
        for (Member h : holders) {
            if (!contains(order, h)) {
                order.add(h);
            }
        }
        return order;
    }

    /** Whether a node answered that it does not hold a key, locally or over the wire. */
    private static boolean isNotFound(IOException e) {
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

    /** What is wrong with a blob that should have {@code length} bytes and checksum {@code crc32c}, or null. */
    @Nullable
    static String check(byte[] data, int length, int crc32c) {
        if (data.length != length) {
            return "length " + data.length + " != expected " + length;
        }
        CRC32C crc = new CRC32C();
        crc.update(data);
        if ((int) crc.getValue() != crc32c) {
            return "CRC32C mismatch";
        }
        return null;
    }

    private static boolean contains(List<Member> members, Member member) {
        for (Member m : members) {
            if (m.sameNode(member)) {
                return true;
            }
        }
        return false;
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

    /** One write of one blob: parallel to the first replicas, fallback along the ring on failure. */
    private final class ReplicatedWrite {

        private final String key;
        private final byte[] data;
        private final int wanted;
        private final Deque<Member> spares;
        private final List<Member> acknowledged = new ArrayList<>();
        private final Map<String, String> failures = new LinkedHashMap<>();
        private final CompletableFuture<List<Member>> result = new CompletableFuture<>();
        private final List<Member> first;
        private int outstanding;

        ReplicatedWrite(String key, byte[] data, int wanted, List<Member> order) {
            this.key = key;
            this.data = data;
            this.wanted = wanted;
            this.spares = new ArrayDeque<>(order.subList(Math.min(wanted, order.size()), order.size()));
            this.outstanding = Math.min(wanted, order.size());
            this.first = List.copyOf(order.subList(0, outstanding));
        }

        CompletableFuture<List<Member>> start() {
            if (first.isEmpty()) {
                result.completeExceptionally(new IOException("No ring node is live to store " + key));
                return result;
            }
            for (Member target : first) {
                attempt(target);
            }
            return result;
        }

        private void attempt(Member target) {
            node.put(target, key, data).whenComplete((ignored, error) -> onAnswer(target, error));
        }

        private void onAnswer(Member target, @Nullable Throwable error) {
            Member retry = null;
            synchronized (this) {
                if (error == null) {
                    acknowledged.add(target);
                    node.metrics().bytesWritten.addAndGet(data.length);
                } else {
                    Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                    failures.put(target.id(), String.valueOf(cause.getMessage()));
                    retry = spares.poll();
                }
                if (retry == null) {
                    outstanding--;
                }
                if (outstanding == 0 && retry == null) {
                    finish();
                }
            }
            if (retry != null) {
                LOG.warn("[{}] storing {} on {} failed ({}); using {} instead",
                        node.self().id(), key, target.id(), failures.get(target.id()), retry.id());
                attempt(retry);
            }
        }

        /** Called once, under this object's lock, when no attempt is outstanding. */
        private void finish() {
            if (acknowledged.size() >= wanted) {
                result.complete(List.copyOf(acknowledged));
            } else if (!acknowledged.isEmpty()) {
                node.metrics().underReplicatedWrites.incrementAndGet();
                LOG.warn("[{}] {} is stored on {} node(s) instead of {}: {}",
                        node.self().id(), key, acknowledged.size(), wanted, failures);
                result.complete(List.copyOf(acknowledged));
            } else {
                result.completeExceptionally(new IOException("Could not store " + key + " on any ring node: " + failures));
            }
        }
    }
}
