package io.sr3.flink.pacing;

/** Where a pacer publishes its latest status for the Flink metrics of the job's TaskManagers. */
public interface PacerStatusPublisher {

    /** Publishes nothing: for tests, and for a JobManager without a ring node. */
    PacerStatusPublisher NONE = new PacerStatusPublisher() {
        @Override
        public void publish(PacerStatus status) {}

        @Override
        public void clear() {}
    };

    /** Called after every decision; implementations may drop updates to limit traffic. */
    void publish(PacerStatus status);

    /** The pacer stopped: its status must no longer be shown. */
    void clear();
}
