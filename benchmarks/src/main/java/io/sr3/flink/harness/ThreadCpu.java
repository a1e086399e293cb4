package io.sr3.flink.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * CPU time of every thread of this JVM, grouped by what the thread does, from Linux's
 * {@code /proc/self/task/<tid>/stat}. Unlike {@code ThreadMXBean}, this also sees the threads
 * that are not Java threads: the garbage collector's and RocksDB's background threads, where much
 * of a checkpoint's cost lands.
 *
 * <p>{@link #snapshot} before and after a window, then {@link #secondsByGroup}. A thread that ended
 * inside the window is not in the second snapshot; its CPU shows as {@link #ENDED}, the process
 * CPU time not accounted to a live thread. On a system without {@code /proc} the snapshot is
 * empty and everything is {@link #ENDED}.
 */
public final class ThreadCpu {

    /** Group of the CPU time no thread alive at the end of the window accounts for. */
    public static final String ENDED = "threads ended in the window";

    /** Linux's clock ticks per second for {@code utime}/{@code stime}: 100 on every common kernel. */
    private static final double TICKS_PER_SECOND = 100;

    /** Groups in the order reports list them: a thread belongs to the first group whose rule matches its name. */
    private static final List<Group> GROUPS = List.of(
            new Group("Flink task threads (the job, its source's rate limiter, synchronous snapshots)",
                    n -> n.startsWith("Source: ") || n.contains(" -> ") || n.contains(" (") || n.startsWith("flink-rate-limi")),
            new Group("RocksDB background (flush, compaction)", n -> n.startsWith("rocksdb:")),
            new Group("garbage collector", n -> n.startsWith("GC Thread") || n.startsWith("G1 ")),
            new Group("JIT compiler", n -> n.contains("CompilerThre")),
            new Group("flink-sr3 ring (transport, store, requests)", n -> n.startsWith("sr3-")),
            new Group("Flink asynchronous checkpoint part and uploads", n -> n.startsWith("AsyncOperation")
                    || n.startsWith("pool-") || n.startsWith("flink-rocksdb") || n.startsWith("Flink-")),
            new Group("HDFS (NameNode, DataNodes, client)", n -> n.startsWith("DataXceiver") || n.startsWith("IPC ")
                    || n.startsWith("DataStreamer") || n.startsWith("ResponseProce") || n.startsWith("PacketResponde")
                    || n.startsWith("BP-") || n.startsWith("org.apache.hado") || n.startsWith("VolumeScanner")
                    || n.startsWith("hdfs") || n.startsWith("DataNode") || n.startsWith("Async disk work")
                    || n.startsWith("FSEditLog") || n.startsWith("MarkedDeleteBlo")),
            new Group("Flink runtime (network, RPC, metrics)", n -> n.startsWith("flink-") || n.startsWith("Flink ")
                    || n.startsWith("pekko") || n.startsWith("Output") || n.startsWith("Checkpoint")),
            new Group("other", n -> true));

    private record Group(String name, Predicate<String> matches) {}

    /** One thread's name (as the kernel keeps it: at most 15 characters) and CPU ticks so far. */
    public record Sample(String name, long ticks) {}

    /** CPU so far per live thread id, and the whole process's CPU so far in nanoseconds. */
    public record Snapshot(Map<Integer, Sample> threads, long processCpuNanos) {}

    private ThreadCpu() {}

    public static Snapshot snapshot() {
        long processCpu = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
        Map<Integer, Sample> threads = new HashMap<>();
        Path tasks = Path.of("/proc/self/task");
        if (Files.isDirectory(tasks)) {
            try (Stream<Path> entries = Files.list(tasks)) {
                for (Path task : entries.toList()) {
                    readThread(task).ifPresent(s -> threads.put(Integer.parseInt(task.getFileName().toString()), s));
                }
            } catch (IOException e) {
                throw new IllegalStateException("Cannot list " + tasks, e);
            }
        }
        return new Snapshot(threads, processCpu);
    }

    /**
     * CPU-seconds per group between two snapshots, in report order, groups without CPU left out;
     * {@link #ENDED} holds what the process spent beyond the live threads' sum.
     */
    public static Map<String, Double> secondsByGroup(Snapshot before, Snapshot after) {
        Map<String, Double> byGroup = new LinkedHashMap<>();
        GROUPS.forEach(g -> byGroup.put(g.name(), 0.0));
        double accounted = 0;
        for (Map.Entry<Integer, Sample> e : after.threads().entrySet()) {
            Sample earlier = before.threads().get(e.getKey());
            boolean sameThread = earlier != null && earlier.name().equals(e.getValue().name());
            double seconds = (e.getValue().ticks() - (sameThread ? earlier.ticks() : 0)) / TICKS_PER_SECOND;
            byGroup.merge(groupOf(e.getValue().name()), seconds, Double::sum);
            accounted += seconds;
        }
        double process = (after.processCpuNanos() - before.processCpuNanos()) / 1e9;
        byGroup.put(ENDED, Math.max(0, process - accounted));
        byGroup.values().removeIf(v -> v <= 0);
        return byGroup;
    }

    /** CPU-seconds per thread name with its digits replaced by {@code #}, the largest first: for finding a new group. */
    public static Map<String, Double> secondsByName(Snapshot before, Snapshot after) {
        Map<String, Double> byName = new TreeMap<>();
        for (Map.Entry<Integer, Sample> e : after.threads().entrySet()) {
            Sample earlier = before.threads().get(e.getKey());
            boolean sameThread = earlier != null && earlier.name().equals(e.getValue().name());
            double seconds = (e.getValue().ticks() - (sameThread ? earlier.ticks() : 0)) / TICKS_PER_SECOND;
            byName.merge(e.getValue().name().replaceAll("[0-9]+", "#"), seconds, Double::sum);
        }
        Map<String, Double> sorted = new LinkedHashMap<>();
        byName.entrySet().stream().filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    static String groupOf(String threadName) {
        for (Group g : GROUPS) {
            if (g.matches().test(threadName)) {
                return g.name();
            }
        }
        throw new AssertionError("the last group matches every name");
    }

    /**
     * Reads {@code comm} and {@code utime + stime} from a task's {@code stat}: the name sits in
     * parentheses and may itself contain spaces and parentheses, so fields are counted after the
     * last ')'.
     */
    static Optional<Sample> parseStat(String stat) {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open) {
            return Optional.empty();
        }
        String[] fields = stat.substring(close + 2).trim().split(" ");
        // after the name: state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15)
        if (fields.length < 13) {
            return Optional.empty();
        }
        return Optional.of(new Sample(stat.substring(open + 1, close),
                Long.parseLong(fields[11]) + Long.parseLong(fields[12])));
    }

    private static Optional<Sample> readThread(Path task) {
        try {
            return parseStat(Files.readString(task.resolve("stat")));
        } catch (IOException e) {
            return Optional.empty(); // the thread ended while the directory was listed
        }
    }
}
