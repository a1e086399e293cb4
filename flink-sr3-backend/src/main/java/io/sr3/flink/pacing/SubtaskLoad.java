package io.sr3.flink.pacing;

/**
 * How one subtask spent its time over the last measurement period.
 *
 * @param vertex name of its job vertex (for log lines)
 * @param subtask subtask index
 * @param busyRatio fraction of time spent processing, in [0, 1]
 * @param backPressureRatio fraction of time blocked by downstream, in [0, 1]
 */
record SubtaskLoad(String vertex, int subtask, double busyRatio, double backPressureRatio) {

    public SubtaskLoad {
        if (!(busyRatio >= 0 && busyRatio <= 1.0001) || !(backPressureRatio >= 0 && backPressureRatio <= 1.0001)) {
            throw new IllegalArgumentException("Ratios of " + vertex + "#" + subtask + " must be in [0, 1], were busy "
                    + busyRatio + ", back-pressure " + backPressureRatio);
        }
    }

    /** The part of the time the subtask is not idle: what a checkpoint barrier competes with. */
    public double load() {
        return Math.min(1, busyRatio + backPressureRatio);
    }
}
