package io.sr3.flink.harness;

import io.sr3.flink.testjob.KeyResult;
import io.sr3.flink.testjob.RunRegistry;
import io.sr3.flink.testjob.StatefulTestJob;
import io.sr3.flink.testjob.TestJobSpec;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.util.Map;

/** Builds {@link StatefulTestJob} graphs for an embedded cluster and checks what a run delivered. */
public final class TestJobs {

    private TestJobs() {}

    /** The job as a {@link JobGraph}; {@code jobConfig} carries backend, checkpointing and restart settings. */
    public static JobGraph jobGraph(Configuration jobConfig, TestJobSpec spec, int parallelism) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(jobConfig);
        env.setParallelism(parallelism);
        StatefulTestJob.addToEnvironment(env, spec);
        JobGraph graph = env.getStreamGraph().getJobGraph();
        return graph;
    }

    /**
     * Compares a finished run with {@link StatefulTestJob#expectedResults}: every key present with
     * exactly the expected (count, sum, payload checksum), and emitted exactly once.
     */
    public static Verdict verify(TestJobSpec spec) {
        Map<Integer, KeyResult> expected = StatefulTestJob.expectedResults(spec);
        RunRegistry.Run run = RunRegistry.run(spec.runId());
        Map<Integer, KeyResult> actual = run.results();
        int matching = 0;
        int wrong = 0;
        String firstProblem = null;
        for (Map.Entry<Integer, KeyResult> e : expected.entrySet()) {
            KeyResult got = actual.get(e.getKey());
            if (e.getValue().equals(got)) {
                matching++;
            } else {
                wrong++;
                if (firstProblem == null) {
                    firstProblem = "key " + e.getKey() + ": expected " + e.getValue() + ", got " + got;
                }
            }
        }
        int unexpected = 0;
        for (Integer key : actual.keySet()) {
            if (!expected.containsKey(key)) {
                unexpected++;
                if (firstProblem == null) {
                    firstProblem = "unexpected key " + key + ": " + actual.get(key);
                }
            }
        }
        long duplicates = run.emissions().values().stream().filter(n -> n > 1).count();
        if (duplicates > 0 && firstProblem == null) {
            firstProblem = duplicates + " key(s) emitted more than once";
        }
        return new Verdict(expected.size(), matching, wrong, unexpected, duplicates, run.restoredStarts(), firstProblem);
    }

    /**
     * The outcome of {@link #verify}.
     *
     * @param expectedKeys keys the job must report
     * @param matchingKeys keys reported with exactly the expected result
     * @param wrongKeys keys missing or reported with another result
     * @param unexpectedKeys keys reported that should not exist
     * @param duplicatedKeys keys whose result was emitted more than once
     * @param restoredStarts operator instances that started from a checkpoint
     * @param firstProblem a readable description of the first difference, or null
     */
    public record Verdict(int expectedKeys, int matchingKeys, int wrongKeys, int unexpectedKeys, long duplicatedKeys,
            int restoredStarts, String firstProblem) {

        public boolean exact() {
            return wrongKeys == 0 && unexpectedKeys == 0 && duplicatedKeys == 0 && matchingKeys == expectedKeys;
        }
    }
}
