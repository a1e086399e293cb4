package io.sr3.flink.it;

import io.sr3.flink.WorkingState;
import io.sr3.flink.testjob.KeyResult;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.StatefulTestJob;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.runtime.jobmaster.JobResult;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Assertions and names shared by the MiniCluster tests. */
final class Sr3ITCaseSupport {

    private static final AtomicLong RUNS = new AtomicLong();

    private Sr3ITCaseSupport() {}

    static String runId(String scenario, WorkingState workingState) {
        return scenario + "-" + workingState.name().toLowerCase() + "-" + RUNS.incrementAndGet();
    }

    static void assertSucceeded(JobResult result, RunRegistry.Run run) {
        assertThat(result.isSuccess())
                .as("job %s of %s should finish; failure: %s", result.getJobId(), run,
                        result.getSerializedThrowable().map(t -> t.getFullStringifiedStackTrace()).orElse("none"))
                .isTrue();
    }

    /**
     * Exactly the expected result for every key, each emitted exactly once, and every record
     * counted by {@link RunRegistry.Run#processedRecords} (which the benchmarks' throughput reads).
     */
    static void assertExactResults(TestJobSpec spec) {
        RunRegistry.Run run = RunRegistry.run(spec.runId());
        Map<Integer, KeyResult> expected = StatefulTestJob.expectedResults(spec);
        assertThat(run.results()).as("results of %s", run).isEqualTo(expected);
        Map<Integer, Integer> once = new TreeMap<>();
        expected.keySet().forEach(key -> once.put(key, 1));
        assertThat(run.emissions()).as("emissions per key of %s", run).isEqualTo(once);
        assertThat(run.processedRecords()).as("records the keyed operator processed, replays counted again")
                .isGreaterThanOrEqualTo(spec.records());
    }

    /** The throwable and all its causes and suppressed exceptions, each once. */
    static List<Throwable> causeTree(Throwable root) {
        List<Throwable> all = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Throwable> todo = new ArrayList<>(List.of(root));
        while (!todo.isEmpty()) {
            Throwable t = todo.remove(todo.size() - 1);
            if (t == null || !seen.add(t)) {
                continue;
            }
            all.add(t);
            todo.add(t.getCause());
            todo.addAll(List.of(t.getSuppressed()));
        }
        return all;
    }
}
