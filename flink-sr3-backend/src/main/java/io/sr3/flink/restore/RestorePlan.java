package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;

import javax.annotation.Nullable;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The planner's decision for one restore (or one batch of restores to the same node).
 *
 * @param structure the structure to execute
 * @param predictedSeconds predicted restore time of every structure that can run
 * @param assignment which holder sends which blocks, by holder id (every block exactly once)
 * @param chain for {@link Structure#LINE}: holders in forwarding order, the last delivers to the
 *     recovering node; empty otherwise
 * @param parents for {@link Structure#TREE}: each holder's parent, {@link #RECOVERING} for the
 *     root's children; empty otherwise
 * @param note why the plan is not the requested structure, or not the one predicted fastest; null otherwise
 */
public record RestorePlan(
        Structure structure,
        Map<Structure, Double> predictedSeconds,
        Map<String, List<BlockSource>> assignment,
        List<String> chain,
        Map<String, String> parents,
        @Nullable String note) {

    /** The parent id that stands for the recovering node in {@link #parents}. */
    public static final String RECOVERING = "<recovering>";

    public RestorePlan {
        predictedSeconds = Map.copyOf(predictedSeconds);
        assignment = Map.copyOf(assignment);
        chain = List.copyOf(chain);
        parents = Map.copyOf(parents);
    }

    /** Predicted time of the chosen structure. */
    public double predicted() {
        return predictedSeconds.get(structure);
    }

    /**
     * Every structure's prediction, at least {@code localSeconds}: the time the restoring node
     * needs for its own blocks, which it reads while the network fetches the rest.
     */
    public Map<Structure, Double> predictedWithLocalReads(double localSeconds) {
        Map<Structure, Double> total = new EnumMap<>(Structure.class);
        predictedSeconds.forEach((s, seconds) -> total.put(s, Math.max(seconds, localSeconds)));
        return total;
    }

    public long totalBytes() {
        return assignment.values().stream().flatMap(List::stream).mapToLong(BlockSource::bytes).sum();
    }
}
