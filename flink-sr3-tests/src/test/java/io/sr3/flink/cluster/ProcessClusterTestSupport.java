package io.sr3.flink.cluster;

import io.sr3.flink.node.RingStatsClient;
import io.sr3.flink.testing.Deadline;
import io.sr3.flink.testjob.FileResultSink;
import io.sr3.flink.testjob.KeyResult;
import io.sr3.flink.testjob.StatefulTestJob;
import io.sr3.flink.testjob.TestJobSpec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Assertions and ring probes shared by the multi-process tests. */
final class ProcessClusterTestSupport {

    static final Duration JOB_TIMEOUT = Duration.ofSeconds(150);

    private ProcessClusterTestSupport() {}

    /**
     * A directory for one cluster under the module's {@code target/}, kept after the test so that
     * the processes' logs can be read when it failed.
     */
    static Path clusterDir(String name) {
        return Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().getParent()
                .resolve("process-clusters").resolve(name + "-" + System.currentTimeMillis());
    }

    /** Exactly the expected result for every key, each emitted exactly once, read from the result files. */
    static void assertExactResults(Path resultDir, TestJobSpec spec) {
        Map<Integer, List<KeyResult>> delivered = FileResultSink.read(resultDir);
        Map<Integer, KeyResult> expected = StatefulTestJob.expectedResults(spec);
        Map<Integer, Integer> emissions = new TreeMap<>();
        Map<Integer, KeyResult> last = new TreeMap<>();
        delivered.forEach((key, results) -> {
            emissions.put(key, results.size());
            last.put(key, results.get(results.size() - 1));
        });
        Map<Integer, Integer> once = new TreeMap<>();
        expected.keySet().forEach(key -> once.put(key, 1));
        assertThat(emissions).as("emissions per key in %s", resultDir).isEqualTo(once);
        assertThat(last).as("results in %s", resultDir).isEqualTo(expected);
    }

    /** STATS of every given TaskManager's ring node, by TaskManager name; unreachable nodes are left out. */
    static Map<String, Map<String, Long>> ringStats(RingStatsClient stats, List<FlinkProcess> taskManagers) {
        Map<String, Map<String, Long>> all = new LinkedHashMap<>();
        for (FlinkProcess tm : taskManagers) {
            try {
                all.put(tm.name(), stats.stats(tm.ringAddress()));
            } catch (IOException e) {
                // not up yet, or just killed
            }
        }
        return all;
    }

    static long sum(Map<String, Map<String, Long>> stats, String counter) {
        return stats.values().stream().mapToLong(s -> s.getOrDefault(counter, 0L)).sum();
    }

    /** Waits until every given TaskManager's ring node answers and sees a ring of exactly {@code size} storage nodes. */
    static void awaitRingSize(RingStatsClient stats, List<FlinkProcess> taskManagers, int size) {
        Deadline.poll("every ring node to see " + size + " members", Duration.ofSeconds(60), () -> {
            Map<String, Map<String, Long>> all = ringStats(stats, taskManagers);
            return all.size() == taskManagers.size()
                    && all.values().stream().allMatch(s -> s.get("ringSize") == size);
        }, () -> describeRing(stats, taskManagers));
    }

    /** Each TaskManager's ring stats, or, for one that does not answer, whether it lives and its log's last ring warnings. */
    private static String describeRing(RingStatsClient stats, List<FlinkProcess> taskManagers) {
        Map<String, Map<String, Long>> all = ringStats(stats, taskManagers);
        StringBuilder description = new StringBuilder(all.toString());
        for (FlinkProcess tm : taskManagers) {
            if (!all.containsKey(tm.name())) {
                description.append("\n").append(tm.name()).append(" (alive: ").append(tm.isAlive())
                        .append(") does not answer; its last sr3 warnings and errors:\n").append(ringWarnings(tm));
            }
        }
        return description.toString();
    }

    private static String ringWarnings(FlinkProcess tm) {
        return lastLogLines(tm, l -> (l.contains(" WARN ") || l.contains(" ERROR "))
                && (l.contains("sr3") || l.contains("Ring") || l.contains("Exception")), 10);
    }

    /**
     * The last lines of a TaskManager's log about replica repair (the repairer's own lines and
     * every sr3 warning): what a failed wait for a repaired ring needs to say why it did not heal.
     */
    static String repairLog(FlinkProcess tm) {
        return lastLogLines(tm, l -> l.contains("ReplicaRepairer")
                || ((l.contains(" WARN ") || l.contains(" ERROR ")) && l.contains("sr3")), 15);
    }

    private static String lastLogLines(FlinkProcess tm, Predicate<String> filter, int count) {
        Path log = tm.directory().resolve(tm.name() + ".log");
        try (Stream<String> lines = Files.lines(log)) {
            List<String> matching = lines.filter(filter).toList();
            return String.join("\n", matching.subList(Math.max(0, matching.size() - count), matching.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no log at " + log + ": " + e + ")";
        }
    }
}
