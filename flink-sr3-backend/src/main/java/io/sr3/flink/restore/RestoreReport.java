package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;

import javax.annotation.Nullable;

import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What one restore did and how well it was predicted: the content of its log line and metrics.
 *
 * @param description what was restored (subtask and files)
 * @param bytes bytes restored
 * @param blocks blocks restored
 * @param localBlocks of those, blocks this node held itself
 * @param holders remote nodes the plan used
 * @param structure the structure executed
 * @param requested the structure asked for by {@code sr3.restore.strategy}, or null for auto
 * @param predictedSeconds the planner's prediction for every structure that could run
 * @param actualSeconds measured, first request to last block
 * @param refetchedBlocks blocks fetched again from another replica (corrupt or lost on the route)
 * @param replans times the plan was rebuilt around an unreachable holder
 * @param note why the plan is not the requested structure, or not the one predicted fastest; null otherwise
 * @param linkSources for every holder the plan used, the planner's estimate of its link when it
 *     planned and where it came from (measured when, or the default); with blocks of this node's
 *     own, the same for its local read rate ({@link NetworkView#LOCAL_READS})
 */
public record RestoreReport(
        String description,
        long bytes,
        int blocks,
        int localBlocks,
        int holders,
        Structure structure,
        @Nullable Structure requested,
        Map<Structure, Double> predictedSeconds,
        double actualSeconds,
        int refetchedBlocks,
        int replans,
        @Nullable String note,
        Map<String, String> linkSources) {

    public RestoreReport {
        predictedSeconds = Map.copyOf(predictedSeconds);
        linkSources = Map.copyOf(linkSources);
    }

    /** The prediction for the executed structure, 0 when nothing had to be fetched. */
    public double predicted() {
        return predictedSeconds.getOrDefault(structure, 0.0);
    }

    /** |actual - predicted| / actual, or NaN when nothing remote was fetched. */
    public double predictionError() {
        return actualSeconds > 0 && blocks > localBlocks ? Math.abs(actualSeconds - predicted()) / actualSeconds : Double.NaN;
    }

    /** The one line logged per restore. */
    public String logLine() {
        String predictions = predictedSeconds.entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .map(e -> name(e.getKey()) + " " + seconds(e.getValue()))
                .collect(Collectors.joining(", "));
        return String.format(Locale.ROOT,
                "sr3 restore of %s: %d bytes in %d blocks (%d local) from %d holder(s) by %s (%s; predicted %s), "
                        + "predicted %s, actual %s, error %s; %d block(s) refetched from another replica, %d re-plan(s)%s%s",
                description, bytes, blocks, localBlocks, holders, name(structure),
                requested == null ? "auto" : "forced " + name(requested),
                predictions.isEmpty() ? "nothing remote" : predictions,
                seconds(predicted()), seconds(actualSeconds),
                Double.isNaN(predictionError()) ? "n/a" : String.format(Locale.ROOT, "%.0f%%", 100 * predictionError()),
                refetchedBlocks, replans, note == null ? "" : "; " + note, linkSources.isEmpty() ? "" : "; links: "
                        + linkSources.entrySet().stream().sorted(Map.Entry.comparingByKey())
                                .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", ")));
    }

    private static String name(Structure structure) {
        return structure.name().toLowerCase(Locale.ROOT);
    }

    private static String seconds(double value) {
        return String.format(Locale.ROOT, "%.3f s", value);
    }
}
