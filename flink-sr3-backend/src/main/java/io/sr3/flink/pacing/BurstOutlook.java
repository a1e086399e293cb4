package io.sr3.flink.pacing;

/**
 * What the job's recent input says about bursts ({@link BurstHistory}): a burst is the load peak
 * that a checkpoint the bound does not need should avoid. Bursts are measured in records, what a
 * replay has to work through, not in seconds.
 *
 * @param largestRecords the records of the largest burst that ended within {@code sr3.pacing.peak-memory}
 * @param inBurst whether the input is in a burst now
 * @param burstRecords the records the current burst brought so far (0 outside a burst)
 * @param quietRate the mean input rate between bursts (for log lines)
 * @param settling the input is moving from its quiet rate into a burst, or has no rate sample
 *     since a restart: the load measured over the last rate window is not what comes
 */
record BurstOutlook(double largestRecords, boolean inBurst, double burstRecords, double quietRate,
        boolean settling) {

    public BurstOutlook {
        if (!(largestRecords > 0) || Double.isInfinite(largestRecords)) {
            throw new IllegalArgumentException("largestRecords must be finite and > 0, was " + largestRecords);
        }
        if (!(burstRecords >= 0) || Double.isInfinite(burstRecords) || !(quietRate >= 0) || Double.isInfinite(quietRate)) {
            throw new IllegalArgumentException("burstRecords and quietRate must be finite and >= 0, were "
                    + burstRecords + " and " + quietRate);
        }
    }

    /** Whether the current burst is one to wait out: not larger than any remembered (that may be a new level of load). */
    public boolean burstToWaitOut() {
        return inBurst && burstRecords < largestRecords;
    }
}
