package io.sr3.flink.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A reproducible random schedule of faults for the fault soak: the same seed, round count, cluster
 * size, replication factor and kinds always give the same rounds, in any JVM.
 *
 * <p>Invariants, checked by {@link FaultScheduleTest}:
 * <ul>
 *   <li>The first {@code min(rounds, kinds)} rounds hold one fault each, every kind once in a
 *       seeded order, so a run of at least that many rounds covers every kind.
 *   <li>A round that restarts the whole cluster holds nothing else.
 *   <li>Any other round holds 1 to {@code replicationFactor - 1} faults on distinct TaskManagers,
 *       so at every moment at least one holder of every block is up (paused, killed and full
 *       nodes included), and at most {@code replicationFactor - 1} of them lose their disk.
 * </ul>
 * Rounds never overlap: the soak starts a round only once the ring reports the previous round's
 * losses repaired, so there are never more than {@code replicationFactor - 1} overlapping
 * permanent disk losses.
 *
 * @param seed the seed the rounds were drawn from; print it, it reproduces the run
 * @param rounds the rounds, in order
 */
record FaultSchedule(long seed, List<Round> rounds) {

    /** What happens to a TaskManager (or to the whole cluster) in one fault. */
    enum Kind {
        /** SIGKILL a TaskManager; restart it at once with its store directory. */
        KILL(false, false),
        /** SIGKILL a TaskManager and delete its store directory; restart it at once, empty. */
        KILL_LOSE_DISK(true, false),
        /** SIGKILL a TaskManager; it stays down until the ring repaired without it, then returns with an empty disk. */
        DISK_REPLACED(true, false),
        /** SIGSTOP a TaskManager for longer than the ring's failure detector timeout, then SIGCONT. */
        PAUSE(false, false),
        /**
         * SIGKILL a TaskManager; restart it at once with its store directory and {@code sr3.store.max-size}
         * at what its store holds plus one block, so that it refuses new blocks while the job
         * checkpoints, is cancelled and resumes; then SIGKILL it again and restart it without the limit.
         */
        FULL_STORE(false, false),
        /** SIGKILL the JobManager and every TaskManager at once; restart all with their store directories. */
        RESTART_ALL(false, true),
        /** Like {@link #RESTART_ALL}, but every ring node comes back on a new port. */
        RESTART_ALL_NEW_PORTS(false, true);

        private final boolean losesDisk;
        private final boolean wholeCluster;

        Kind(boolean losesDisk, boolean wholeCluster) {
            this.losesDisk = losesDisk;
            this.wholeCluster = wholeCluster;
        }

        /** Whether the fault permanently destroys the replicas on its node. */
        boolean losesDisk() {
            return losesDisk;
        }

        /** Whether the fault hits every process at once (and so has no target). */
        boolean wholeCluster() {
            return wholeCluster;
        }
    }

    /**
     * One fault.
     *
     * @param kind what happens
     * @param target index of the TaskManager (0-based, in start order); -1 for the whole cluster
     * @param pause how long a {@link Kind#PAUSE} lasts; zero for other kinds
     */
    record Fault(Kind kind, int target, Duration pause) {
        Fault {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(pause, "pause");
            if (kind.wholeCluster() != (target == -1)) {
                throw new IllegalArgumentException("A " + kind + " fault needs target " + (kind.wholeCluster() ? "-1" : ">= 0")
                        + ", got " + target);
            }
            if ((kind == Kind.PAUSE) == pause.isZero()) {
                throw new IllegalArgumentException("Only a PAUSE has a pause duration; got " + kind + " for " + pause);
            }
        }

        @Override
        public String toString() {
            String on = target < 0 ? "cluster" : "tm#" + target;
            return kind + "(" + on + (kind == Kind.PAUSE ? ", " + pause.toMillis() + " ms" : "") + ")";
        }
    }

    /** The faults injected together in one round. */
    record Round(int index, List<Fault> faults) {
        Round {
            faults = List.copyOf(faults);
            if (faults.isEmpty()) {
                throw new IllegalArgumentException("Round " + index + " has no fault");
            }
        }

        /** Faults of this round that destroy a disk. */
        long diskLosses() {
            return faults.stream().filter(f -> f.kind().losesDisk()).count();
        }

        @Override
        public String toString() {
            return "round " + index + ": " + faults;
        }
    }

    FaultSchedule {
        rounds = List.copyOf(rounds);
    }

    /**
     * Draws a schedule.
     *
     * @param seed the seed; the same arguments give the same schedule
     * @param rounds how many rounds
     * @param taskManagers TaskManagers in the cluster; targets are drawn from {@code 0 .. taskManagers-1}
     * @param replicationFactor {@code sr3.ring.replication-factor}; bounds the faults per round to one less
     * @param kinds the kinds to draw from
     * @param minPause shortest pause; longer than the ring's failure detector timeout
     * @param maxPause longest pause
     */
    static FaultSchedule generate(long seed, int rounds, int taskManagers, int replicationFactor, Set<Kind> kinds,
            Duration minPause, Duration maxPause) {
        if (rounds < 0 || taskManagers < 1 || replicationFactor < 2 || kinds.isEmpty()) {
            throw new IllegalArgumentException("Need rounds >= 0, TaskManagers >= 1, replication factor >= 2 and a kind; got "
                    + rounds + " rounds, " + taskManagers + " TaskManagers, replication factor " + replicationFactor
                    + ", kinds " + kinds);
        }
        if (minPause.isNegative() || minPause.isZero() || maxPause.compareTo(minPause) < 0) {
            throw new IllegalArgumentException("Need 0 < minPause <= maxPause, got " + minPause + " and " + maxPause);
        }
        int perRound = Math.min(replicationFactor - 1, taskManagers);
        SplittableRandom random = new SplittableRandom(seed);
        List<Kind> all = new ArrayList<>(EnumSet.copyOf(kinds));
        List<Kind> nodeKinds = all.stream().filter(k -> !k.wholeCluster()).toList();
        List<Kind> firstPass = new ArrayList<>(all);
        shuffle(firstPass, random);
        List<Round> drawn = new ArrayList<>(rounds);
        for (int r = 0; r < rounds; r++) {
            List<Fault> faults = new ArrayList<>();
            if (r < firstPass.size()) {
                faults.add(fault(firstPass.get(r), random.nextInt(taskManagers), random, minPause, maxPause));
            } else {
                Kind first = all.get(random.nextInt(all.size()));
                if (first.wholeCluster() || nodeKinds.isEmpty()) {
                    faults.add(fault(first, -1, random, minPause, maxPause));
                } else {
                    int count = 1 + random.nextInt(perRound);
                    List<Integer> targets = new ArrayList<>();
                    for (int i = 0; i < taskManagers; i++) {
                        targets.add(i);
                    }
                    shuffle(targets, random);
                    for (int i = 0; i < count; i++) {
                        Kind kind = i == 0 ? first : nodeKinds.get(random.nextInt(nodeKinds.size()));
                        faults.add(fault(kind, targets.get(i), random, minPause, maxPause));
                    }
                }
            }
            drawn.add(new Round(r + 1, faults));
        }
        return new FaultSchedule(seed, drawn);
    }

    private static Fault fault(Kind kind, int target, SplittableRandom random, Duration minPause, Duration maxPause) {
        if (kind.wholeCluster()) {
            return new Fault(kind, -1, Duration.ZERO);
        }
        Duration pause = Duration.ZERO;
        if (kind == Kind.PAUSE) {
            long span = maxPause.toMillis() - minPause.toMillis();
            pause = minPause.plusMillis(span == 0 ? 0 : random.nextLong(span + 1));
        }
        return new Fault(kind, target, pause);
    }

    /** Fisher-Yates with the schedule's generator ({@link Collections#shuffle} takes only a {@code Random}). */
    private static <T> void shuffle(List<T> list, SplittableRandom random) {
        for (int i = list.size() - 1; i > 0; i--) {
            Collections.swap(list, i, random.nextInt(i + 1));
        }
    }

    /** The seed and every round, one per line: printed before a run so that a failure can be replayed. */
    String describe() {
        StringBuilder text = new StringBuilder("fault schedule, seed " + seed + ", " + rounds.size() + " rounds");
        for (Round round : rounds) {
            text.append("\n  ").append(round);
        }
        return text.toString();
    }
}
