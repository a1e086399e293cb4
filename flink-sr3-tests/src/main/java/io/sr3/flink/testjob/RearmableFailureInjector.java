package io.sr3.flink.testjob;

import org.apache.flink.api.common.functions.RichMapFunction;

/** Passes records through and throws once each time the run was {@linkplain BurstyRuns.Run#armFailure() armed}. */
final class RearmableFailureInjector extends RichMapFunction<Event, Event> {

    private static final long serialVersionUID = 1L;

    private final String runId;

    RearmableFailureInjector(String runId) {
        this.runId = runId;
    }

    @Override
    public Event map(Event event) {
        if (BurstyRuns.run(runId).claimFailure()) {
            throw new FailureInjector.InjectedFailureException("Injected failure of bursty run " + runId + " at record "
                    + event.index());
        }
        return event;
    }
}
