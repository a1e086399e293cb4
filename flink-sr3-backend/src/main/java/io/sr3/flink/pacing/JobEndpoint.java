package io.sr3.flink.pacing;

import java.io.IOException;

/** Where the pacer reads one job's metrics and checkpoint statistics and triggers its checkpoints. */
public interface JobEndpoint {

    /**
     * The job's current state, counters and checkpoint statistics.
     *
     * @throws UnknownJobException when the endpoint no longer knows the job
     */
    JobView poll() throws IOException;

    /** Asks Flink for one checkpoint of the configured type; returns once the request is accepted. */
    void triggerCheckpoint() throws IOException;

    /** Where this endpoint talks to, for log lines. */
    String describe();

    /** The endpoint does not know the job (HTTP 404): once the pacer has seen it, the job is gone. */
    final class UnknownJobException extends IOException {
        private static final long serialVersionUID = 1L;

        public UnknownJobException(String message) {
            super(message);
        }
    }
}
