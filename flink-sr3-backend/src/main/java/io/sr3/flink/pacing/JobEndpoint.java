package io.sr3.flink.pacing;

import java.io.IOException;

/** Where the pacer reads one job's metrics and checkpoint statistics and triggers its checkpoints. */
public interface JobEndpoint {

    /** The job's current state, counters and checkpoint statistics. */
    JobView poll() throws IOException;

    /** Asks Flink for one checkpoint of the configured type; returns once the request is accepted. */
    void triggerCheckpoint() throws IOException;

    /** Where this endpoint talks to, for log lines. */
    String describe();
}
