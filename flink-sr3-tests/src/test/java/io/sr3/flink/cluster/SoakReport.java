package io.sr3.flink.cluster;

import io.sr3.flink.cluster.FaultSchedule.Kind;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What one fault soak did and found, written as the JSON result file of a long run. */
@NotThreadSafe
final class SoakReport {

    final long seed;
    final int roundsPlanned;
    final String schedule;
    final Map<Kind, Integer> faults = FaultSoak.emptyCounts();
    final List<String> retainedCheckpoints = new ArrayList<>();
    final List<Long> roundSeconds = new ArrayList<>();
    int roundsVerified;
    /** Resubmissions from a retained checkpoint (after a cancellation or a whole-cluster restart). */
    int resumes;
    /** Restores Flink made by itself after failures (REST {@code counts.restored} of the faulted jobs). */
    long failovers;
    /** Lines full stores logged for the blocks and manifests they refused ({@link FullStore#refusals}). */
    long fullStoreRefusals;
    CheckpointAudit.Result audit;
    String failure;

    SoakReport(long seed, int roundsPlanned, String schedule) {
        this.seed = seed;
        this.roundsPlanned = roundsPlanned;
        this.schedule = schedule;
    }

    void write(Path file, Map<String, String> setup, long totalSeconds) throws IOException {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = json.createObjectNode();
        root.put("seed", seed);
        root.put("roundsPlanned", roundsPlanned);
        root.put("roundsVerified", roundsVerified);
        root.put("totalSeconds", totalSeconds);
        ObjectNode byKind = root.putObject("faultsByKind");
        faults.forEach((kind, count) -> byKind.put(kind.name(), count));
        root.put("restores", resumes + failovers);
        root.put("resumesFromRetainedCheckpoints", resumes);
        root.put("failoverRestores", failovers);
        root.put("fullStoreRefusals", fullStoreRefusals);
        root.put("checkpointsVerified", audit == null ? 0 : audit.checkpoints());
        root.put("bytesLost", audit == null ? -1 : audit.lostBytes());
        if (audit != null) {
            ObjectNode a = root.putObject("audit");
            a.put("files", audit.files());
            a.put("blocks", audit.blocks());
            a.put("bytes", audit.bytes());
            ObjectNode histogram = a.putObject("blocksByIntactReplicas");
            audit.replicaHistogram().forEach((replicas, blocks) -> histogram.put(String.valueOf(replicas), blocks));
            a.putPOJO("problems", audit.problems());
        }
        root.putPOJO("roundSeconds", roundSeconds);
        root.put("failure", failure);
        root.putPOJO("setup", setup);
        root.put("schedule", schedule);
        root.putPOJO("retainedCheckpoints", retainedCheckpoints);
        Files.createDirectories(file.getParent());
        Files.writeString(file, json.writeValueAsString(root) + "\n");
    }
}
