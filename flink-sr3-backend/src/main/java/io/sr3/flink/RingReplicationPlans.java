package io.sr3.flink;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.replication.ReplicationPlan;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where a job's replication plan lives: a blob on the ring that the JobManager's planner writes
 * and the job's TaskManagers read. Each copy carries the time it was published; readers take the
 * newest copy, so a replica that missed an update cannot bring an older plan back.
 *
 * <pre>blob: publishedAtMillis i64 | plan ({@link ReplicationPlan#encode})</pre>
 */
final class RingReplicationPlans {

    private RingReplicationPlans() {}

    /** The ring key of a job's plan. */
    static String key(String jobId) {
        return "replication-" + jobId;
    }

    /** Writes the plan; the future completes once the write quorum stored it. */
    static CompletableFuture<?> publish(RingNode node, String jobId, ReplicationPlan plan, long publishedAtMillis) {
        byte[] encoded = plan.encode();
        byte[] blob = ByteBuffer.allocate(Long.BYTES + encoded.length).putLong(publishedAtMillis).put(encoded).array();
        return node.storage().write(key(jobId), blob, false);
    }

    /**
     * The newest published plan of a job, or null if none was published.
     *
     * @throws IOException if no copy could be read or decoded (each copy's error is named)
     */
    @Nullable
    static ReplicationPlan read(RingNode node, String jobId) throws IOException {
        List<RingStorage.Copy> copies = node.storage().readCopies(key(jobId), "replication plan of job " + jobId);
        ReplicationPlan newest = null;
        long newestAt = Long.MIN_VALUE;
        StringBuilder errors = new StringBuilder();
        for (RingStorage.Copy copy : copies) {
            try {
                if (copy.data().length < Long.BYTES) {
                    throw new IOException("only " + copy.data().length + " bytes");
                }
                long publishedAt = ByteBuffer.wrap(copy.data()).getLong();
                if (publishedAt > newestAt) {
                    newest = ReplicationPlan.decode(Arrays.copyOfRange(copy.data(), Long.BYTES, copy.data().length));
                    newestAt = publishedAt;
                }
            } catch (IOException e) {
                errors.append(errors.length() == 0 ? "" : "; ").append(copy.holder().id()).append(": ").append(e.getMessage());
            }
        }
        if (newest == null && !copies.isEmpty()) {
            throw new IOException("No copy of the replication plan of job " + jobId + " decodes: " + errors);
        }
        return newest;
    }

    /** Deletes a job's plan on every live node (its planner stopped). */
    static void clear(RingNode node, String jobId) {
        node.storage().deleteOn(key(jobId), null);
    }
}
