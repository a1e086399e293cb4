package io.sr3.flink.testjob;

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

/**
 * Passes records through and, if the {@link TestJobSpec} asks for it, throws exactly once per
 * run id: only after this instance was told that a checkpoint completed and saw
 * {@link TestJobSpec#failAfterRecords()} records in its current attempt, so the failover really
 * restores from a checkpoint. Also reports every start, restored or not, to {@link RunRegistry}.
 */
final class FailureInjector extends RichMapFunction<Event, Event> implements CheckpointedFunction, CheckpointListener {

    private static final long serialVersionUID = 1L;

    private final TestJobSpec spec;

    private transient long seen;
    private transient boolean checkpointCompleted;

    FailureInjector(TestJobSpec spec) {
        this.spec = spec;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {
        RunRegistry.run(spec.runId()).recordStart(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                getRuntimeContext().getTaskInfo().getAttemptNumber(), context.isRestored());
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {}

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        checkpointCompleted = true;
        RunRegistry.run(spec.runId()).recordCheckpointComplete(checkpointId);
    }

    @Override
    public Event map(Event event) {
        seen++;
        if (spec.failure() != TestJobSpec.FailureMode.NONE && checkpointCompleted && seen >= spec.failAfterRecords()) {
            RunRegistry.Run run = RunRegistry.run(spec.runId());
            if ((spec.failure() == TestJobSpec.FailureMode.AFTER_CHECKPOINT || run.armed()) && run.claimFailure()) {
                throw new InjectedFailureException("Injected failure of run " + spec.runId() + " in subtask "
                        + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() + " at record " + event.index()
                        + " after " + seen + " records of this attempt");
            }
        }
        return event;
    }

    /** The failure {@link FailureInjector} throws: easy to tell apart from a real one in logs. */
    public static final class InjectedFailureException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedFailureException(String message) {
            super(message);
        }
    }
}
