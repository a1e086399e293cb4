package io.sr3.flink.benchmark;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The raw numbers of one run (one backend, one round) of {@link ProcessRecoveryBenchmark}. Times
 * are milliseconds after the SIGKILL unless named otherwise.
 *
 * @param backend {@link ProcessRecoveryBenchmark.Backend} label
 * @param stateSizeBytes state size of the latest checkpoint completed before the kill
 * @param restoredStateSizeBytes state size of the checkpoint the job restored
 * @param fillMillis from submission until the keyed operator had processed the fill phase and was
 *     back at the present
 * @param lagBeforeKillMillis the processing lag at the kill (the probe's floor)
 * @param detected REST showed the loss (a task left RUNNING)
 * @param restartCreated the earliest CREATED timestamp of the new attempts (restart delay 500 ms included)
 * @param allInitializing the latest INITIALIZING timestamp of the new attempts: every task deployed
 * @param longestRestoreMillis the longest INITIALIZING to RUNNING of a subtask (state download and open)
 * @param running every task RUNNING again
 * @param caughtUp the keyed operator back within {@link ProcessRecoveryBenchmark#CAUGHT_UP_LAG_MILLIS} of its input
 * @param firstCheckpoint the first checkpoint after the restore acknowledged
 * @param restoredBytesPerSecond restored state size over the longest subtask restore
 * @param sr3Restore the sr3 restore log lines of the recovery, summed; empty for the other backends
 * @param lagTrace the processing lag from every task RUNNING until caught up, as pairs of
 *     milliseconds after the kill and the lag then, at most one pair per 200 ms: how the backlog drained
 */
record ProcessRecoveryRun(
        int round,
        String backend,
        String victim,
        long stateSizeBytes,
        long restoredStateSizeBytes,
        String restoredFrom,
        long fillMillis,
        long lagBeforeKillMillis,
        long detected,
        long restartCreated,
        long allInitializing,
        long longestRestoreMillis,
        long running,
        long caughtUp,
        long firstCheckpoint,
        double restoredBytesPerSecond,
        Map<String, Object> sr3Restore,
        java.util.List<long[]> lagTrace) {

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("round", round);
        m.put("backend", backend);
        m.put("victim", victim);
        m.put("stateSizeBytes", stateSizeBytes);
        m.put("restoredStateSizeBytes", restoredStateSizeBytes);
        m.put("restoredFrom", restoredFrom);
        m.put("fillMillis", fillMillis);
        m.put("lagBeforeKillMillis", lagBeforeKillMillis);
        m.put("killToDetectedMillis", detected);
        m.put("killToRestartCreatedMillis", restartCreated);
        m.put("killToAllInitializingMillis", allInitializing);
        m.put("longestSubtaskRestoreMillis", longestRestoreMillis);
        m.put("killToRunningMillis", running);
        m.put("killToCaughtUpMillis", caughtUp);
        m.put("killToFirstCheckpointMillis", firstCheckpoint);
        m.put("restoredBytesPerSecond", restoredBytesPerSecond);
        m.put("lagAfterRunningMillis", lagTrace);
        if (!sr3Restore.isEmpty()) {
            m.put("sr3RestoreLog", sr3Restore);
        }
        return m;
    }
}
