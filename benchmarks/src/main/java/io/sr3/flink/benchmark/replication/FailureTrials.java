package io.sr3.flink.benchmark.replication;

import io.sr3.flink.benchmark.replication.BenchmarkJob.CheckpointFile;
import io.sr3.flink.replication.OperatorCost;
import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * The Monte-Carlo loop of the replication benchmark: many seeded failures of ring nodes, and for
 * each way of giving files their copies (an {@link Arm}), whether every operator's latest
 * checkpoint survives and how long the job takes to recover. Every arm sees the same failures.
 *
 * <p>Each file is placed once per copy count with the real {@link ConsistentHash#placement}
 * (blocks with the subtask's node as the writer, the manifest with at least the replication
 * factor, as the writer stores it); a trial only intersects those holder sets with the dead
 * nodes ({@link PlacedFile#survives}).
 *
 * <p>Recovery time of a trial the job survives: {@code D + max(R + replay)} over the stateful
 * operators Flink restarts ({@link BenchmarkJob#restarted}), R and replay as
 * {@code FailureCostModel} computes them for one subtask. A trial in which some operator's state
 * is lost cannot restore the latest checkpoint (Flink restores a checkpoint whole, and earlier
 * ones share the lost incremental files): it is charged {@code penaltySeconds}, a restart from the
 * last savepoint, reported apart.
 */
@NotThreadSafe
public final class FailureTrials {

    /** A failure: which nodes (bit i = ring member i) die at once. */
    public record Scenario(String id, String description, ToLongFunction<Random> deadNodes) {}

    /**
     * A way to give each file its copies: {@code fixedCopies} (one per file, as a plan gives them)
     * or, when that is null, blindly: each trial gives a random subset of files
     * {@code ceil(blindMean)} copies and the rest {@code floor(blindMean)}, filled up to the same
     * bytes-weighted mean.
     */
    public record Arm(String id, String description, @Nullable int[] fixedCopies, double blindMean,
            int metadataCopies) {
        public Arm {
            Objects.requireNonNull(id, "id");
        }
    }

    /** What one arm scored in one scenario. */
    public record Result(String scenario, String arm, int trials, int jobSurvived, int jobAndMetadataSurvived,
            int[] operatorSurvived, double costProtected, double meanCopies, double minCopies, double maxCopies,
            double[] survivedRecoverySeconds, double penaltySeconds) {

        public double survivedFraction() {
            return (double) jobSurvived / trials;
        }

        /** Mean recovery over every trial, the lost ones charged the penalty. */
        public double meanRecoveryWithPenalty() {
            double sum = Arrays.stream(survivedRecoverySeconds).sum();
            return (sum + (double) (trials - jobSurvived) * penaltySeconds) / trials;
        }
    }

    private final List<CheckpointFile> files;
    private final int[] operatorOfFile;
    private final List<OperatorCost> costs;
    private final int maxCopies;
    /** placed[f][c]: file f placed with c copies (1..maxCopies). */
    private final PlacedFile[][] placed;
    private final PlacedFile[] metadata;
    private final BenchmarkJob job;
    private final double detectionSeconds;
    private final double penaltySeconds;
    private final long totalBytes;

    public FailureTrials(ConsistentHash ring, BenchmarkJob job, List<CheckpointFile> files, String metadataPath,
            List<OperatorCost> costs, int replicationFactor, int maxCopies, double detectionSeconds,
            double penaltySeconds) {
        this.job = job;
        this.files = List.copyOf(files);
        this.costs = List.copyOf(costs);
        this.maxCopies = maxCopies;
        this.detectionSeconds = detectionSeconds;
        this.penaltySeconds = penaltySeconds;
        List<Member> members = ring.members();
        operatorOfFile = new int[files.size()];
        placed = new PlacedFile[files.size()][maxCopies + 1];
        long bytes = 0;
        for (int f = 0; f < files.size(); f++) {
            CheckpointFile file = files.get(f);
            operatorOfFile[f] = operatorIndex(file.operatorId());
            bytes += file.bytes();
            for (int c = 1; c <= maxCopies; c++) {
                placed[f][c] = PlacedFile.place(ring, file.path(), file.fileId(), file.blocks(),
                        members.get(file.node()), c, Math.max(replicationFactor, c));
            }
        }
        totalBytes = bytes;
        // The JobManager writes _metadata (one block) and is no ring member: no writer-first copy.
        metadata = new PlacedFile[maxCopies + 1];
        for (int c = 1; c <= maxCopies; c++) {
            metadata[c] = PlacedFile.place(ring, metadataPath, "metadata-" + metadataPath.hashCode(), 1, null, c,
                    Math.max(replicationFactor, c));
        }
    }

    /** One copy count per file, each file getting its operator's count from {@code copiesByOperator}. */
    public int[] perFile(Map<String, Integer> copiesByOperator) {
        int[] copies = new int[files.size()];
        for (int f = 0; f < files.size(); f++) {
            Integer c = copiesByOperator.get(files.get(f).operatorId());
            if (c == null || c < 1 || c > maxCopies) {
                throw new IllegalArgumentException("Operator " + files.get(f).operatorId() + ": copies " + c
                        + " outside 1.." + maxCopies);
            }
            copies[f] = c;
        }
        return copies;
    }

    /** The bytes-weighted mean copies of {@code copies} (one per file). */
    public double meanCopies(int[] copies) {
        double spent = 0;
        for (int f = 0; f < files.size(); f++) {
            spent += (double) files.get(f).bytes() * copies[f];
        }
        return spent / totalBytes;
    }

    /** Runs {@code trials} failures of {@code scenario} (seeded by {@code seed}) against every arm. */
    public List<Result> run(Scenario scenario, List<Arm> arms, int trials, long seed) {
        Random failures = new Random(seed);
        long[] dead = new long[trials];
        double[] recovery = new double[trials];
        for (int t = 0; t < trials; t++) {
            dead[t] = scenario.deadNodes().applyAsLong(failures);
            recovery[t] = recoverySeconds(dead[t]);
        }
        List<Result> results = new ArrayList<>();
        for (int a = 0; a < arms.size(); a++) {
            results.add(run(scenario, arms.get(a), dead, recovery, new Random(seed * 31 + a + 1)));
        }
        return results;
    }

    private Result run(Scenario scenario, Arm arm, long[] dead, double[] recovery, Random blind) {
        int trials = dead.length;
        int survived = 0;
        int withMetadata = 0;
        int[] operatorSurvived = new int[costs.size()];
        double protectedCost = 0;
        double totalCost = 0;
        double copiesSum = 0;
        double copiesMin = Double.POSITIVE_INFINITY;
        double copiesMax = 0;
        double[] recoveries = new double[trials];
        boolean[] alive = new boolean[costs.size()];
        for (int t = 0; t < trials; t++) {
            int[] copies = arm.fixedCopies() != null ? arm.fixedCopies() : blind(arm.blindMean(), blind);
            double mean = meanCopies(copies);
            copiesSum += mean;
            copiesMin = Math.min(copiesMin, mean);
            copiesMax = Math.max(copiesMax, mean);
            Arrays.fill(alive, true);
            for (int f = 0; f < copies.length; f++) {
                int op = operatorOfFile[f];
                if (alive[op] && !placed[f][copies[f]].survives(dead[t])) {
                    alive[op] = false;
                }
            }
            boolean all = true;
            for (int op = 0; op < alive.length; op++) {
                double cost = costs.get(op).stalledSubtaskSeconds();
                totalCost += cost;
                if (alive[op]) {
                    operatorSurvived[op]++;
                    protectedCost += cost;
                } else {
                    all = false;
                }
            }
            if (all) {
                recoveries[survived++] = recovery[t];
                if (metadata[arm.metadataCopies()].survives(dead[t])) {
                    withMetadata++;
                }
            }
        }
        return new Result(scenario.id(), arm.id(), trials, survived, withMetadata, operatorSurvived,
                protectedCost / totalCost, copiesSum / trials, copiesMin, copiesMax,
                Arrays.copyOf(recoveries, survived), penaltySeconds);
    }

    /**
     * Blind copies with bytes-weighted mean {@code mean}: in a random order, each file gets
     * {@code ceil(mean)} copies while the extra bytes stay within {@code (mean - floor(mean))} of
     * all bytes, the rest {@code floor(mean)}.
     */
    int[] blind(double mean, Random random) {
        int floor = (int) Math.floor(mean);
        double budget = (mean - floor) * totalBytes;
        int[] order = new int[files.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        for (int i = order.length - 1; i > 0; i--) { // Fisher-Yates
            int j = random.nextInt(i + 1);
            int swap = order[i];
            order[i] = order[j];
            order[j] = swap;
        }
        int[] copies = new int[files.size()];
        double extra = 0;
        for (int f : order) {
            long bytes = files.get(f).bytes();
            boolean more = floor < maxCopies && extra + bytes <= budget;
            copies[f] = more ? floor + 1 : floor;
            extra += more ? bytes : 0;
        }
        return copies;
    }

    private double recoverySeconds(long deadNodes) {
        Set<String> restarted = job.restarted(deadNodes);
        double slowest = 0;
        for (OperatorCost c : costs) {
            if (restarted.contains(c.operator().vertexId())) {
                slowest = Math.max(slowest, c.restoreSeconds() + c.replaySeconds());
            }
        }
        return detectionSeconds + slowest;
    }

    private int operatorIndex(String id) {
        for (int i = 0; i < costs.size(); i++) {
            if (costs.get(i).operator().vertexId().equals(id)) {
                return i;
            }
        }
        throw new IllegalArgumentException("No cost for operator " + id);
    }
}
