package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * One write of one blob for {@link RingStorage#write}: in parallel to the first {@code wanted}
 * nodes of the order, each failure replaced by the next spare; the result completes with the
 * acknowledging nodes once no attempt is outstanding, or fails with a {@link
 * WriteQuorumException} below the quorum. State is guarded by this object's lock.
 */
@ThreadSafe
final class ReplicatedWrite {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedWrite.class);

    private final RingNode node;
    private final String key;
    /** The blob between position and limit; each copy reads a duplicate. */
    private final ByteBuffer data;
    private final int crc32c;
    private final int wanted;
    private final int quorum;
    /** Whether nothing else is stored under the key (data blocks), so a failed write may delete its copies. */
    private final boolean ownKey;
    private final Deque<Member> spares;
    private final List<Member> acknowledged = new ArrayList<>();
    private final Map<String, String> failures = new LinkedHashMap<>();
    private final CompletableFuture<List<Member>> result = new CompletableFuture<>();
    private final List<Member> first;
    /** Run when no attempt is outstanding and none failed; null if the caller does not reuse {@link #data}. */
    @Nullable private final Runnable release;
    private int outstanding;

    ReplicatedWrite(RingNode node, String key, ByteBuffer data, int crc32c, int wanted, int quorum, boolean ownKey,
            List<Member> order, @Nullable Runnable release) {
        this.node = node;
        this.release = release;
        this.key = key;
        this.data = data;
        this.crc32c = crc32c;
        this.wanted = wanted;
        this.quorum = quorum;
        this.ownKey = ownKey;
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
        node.put(target, key, data.duplicate(), crc32c).whenComplete((ignored, error) -> onAnswer(target, error));
    }

    private void onAnswer(Member target, @Nullable Throwable error) {
        Member retry = null;
        synchronized (this) {
            if (error == null) {
                acknowledged.add(target);
                node.metrics().bytesWritten.addAndGet(data.remaining());
            } else {
                Throwable cause = PeerClient.unwrap(error);
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
        if (release != null && failures.isEmpty()) {
            release.run();
        }
        if (acknowledged.size() >= wanted) {
            result.complete(List.copyOf(acknowledged));
        } else if (acknowledged.size() >= quorum) {
            node.metrics().underReplicatedWrites.incrementAndGet();
            LOG.warn("[{}] {} is stored on {} node(s) instead of {} (the write quorum is {}): {}",
                    node.self().id(), key, acknowledged.size(), wanted, quorum, failures);
            result.complete(List.copyOf(acknowledged));
        } else {
            node.metrics().failedWrites.incrementAndGet();
            List<String> ids = new ArrayList<>();
            for (Member m : acknowledged) {
                ids.add(m.id());
            }
            WriteQuorumException failure = new WriteQuorumException(key, quorum, ids, failures,
                    node.membership().members().size());
            LOG.warn("[{}] {}", node.self().id(), failure.getMessage());
            if (ownKey) {
                // The copies that did land belong to no file: remove them now rather than at the next sweep.
                // A manifest key may hold an earlier version, which must stay.
                node.storage().deleteOnAsync(key, List.copyOf(acknowledged));
            }
            result.completeExceptionally(failure);
        }
    }
}
