package io.sr3.flink.tools;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.StateObject;

import java.util.ArrayList;
import java.util.List;

/**
 * Flink 1.20 side of the version seam: the in-flight channel state of a subtask, input channels
 * and result subpartitions (1.20 has no {@code getUpstreamOutputBufferState()}).
 */
final class ChannelStates {

    private ChannelStates() {}

    /** Every channel state handle of {@code subtask}. */
    static List<StateObject> of(OperatorSubtaskState subtask) {
        List<StateObject> handles = new ArrayList<>();
        handles.addAll(subtask.getInputChannelState());
        handles.addAll(subtask.getResultSubpartitionState());
        return handles;
    }
}
