package io.sr3.flink.pacing;

/**
 * What the job's recent input says about bursts ({@link BurstHistory}): for the recovery model's
 * input forecast, and for when a checkpoint is cheap (not in a burst). Bursts are measured in
 * records, not seconds: what a replay has to work through is the records a burst brings, and its
 * length in seconds depends on how fast the sources read (a burst that back-pressures the job
 * lasts longer, at a lower rate, and the sources read its lag at more than the burst's rate
 * afterwards).
 *
 * @param largestRecords the records of the largest burst that ended within {@code sr3.pacing.peak-memory}
 * @param inBurst whether the input is in a burst now
 * @param burstRecords the records the current burst brought so far (0 outside a burst)
 * @param quietRate the mean input rate between the bursts, before the current one: where the
 *     input is expected to return when the burst ends
 * @param settling the input is moving from its quiet rate into a burst, or has no rate sample
 *     since a restart: the load measured over the last rate window is not what comes
 * @param burstRate the mean rate of the largest remembered burst once it had settled; 0 when unknown
 * @param forecasting whether the recovery model expects a burst to end
 *     ({@code sr3.pacing.burst-forecast}); without, the input is expected to stay at its current
 *     rate, and the outlook only says when a burst is on (no cheap moment for a checkpoint)
 */
public record BurstOutlook(double largestRecords, boolean inBurst, double burstRecords, double quietRate,
        boolean settling, double burstRate, boolean forecasting) {

    public BurstOutlook {
        if (!(largestRecords > 0) || Double.isInfinite(largestRecords)) {
            throw new IllegalArgumentException("largestRecords must be finite and > 0, was " + largestRecords);
        }
        if (!(burstRecords >= 0) || Double.isInfinite(burstRecords) || !(quietRate >= 0) || Double.isInfinite(quietRate)
                || !(burstRate >= 0) || Double.isInfinite(burstRate)) {
            throw new IllegalArgumentException("burstRecords, quietRate and burstRate must be finite and >= 0, were "
                    + burstRecords + ", " + quietRate + " and " + burstRate);
        }
    }

    /** An outlook for the recovery model's forecast. */
    public BurstOutlook(double largestRecords, boolean inBurst, double burstRecords, double quietRate, boolean settling,
            double burstRate) {
        this(largestRecords, inBurst, burstRecords, quietRate, settling, burstRate, true);
    }

    /** The same outlook, with the input expected to stay at its current rate. */
    public BurstOutlook withoutForecast() {
        return new BurstOutlook(largestRecords, inBurst, burstRecords, quietRate, settling, burstRate, false);
    }

    /**
     * The input from now on, at the current {@code rate}: the rest of a burst no larger than the
     * largest remembered (the records it still lacks to that size), then the quiet rate; the
     * current rate for ever outside a burst, or once the burst has brought more than any
     * remembered one (it may be a new level of load). In a burst's first rate window (settling)
     * the rate is still a mean with quiet time in it, so the burst is expected at the remembered
     * {@link #burstRate()} when that is higher. Without {@link #forecasting()}, the current rate
     * for ever.
     */
    public InputForecast forecast(double rate) {
        double expected = expectedRate(rate);
        if (!forecasting || !inBurst || burstRecords >= largestRecords || !(expected > 0)) {
            return InputForecast.constant(expected);
        }
        return new InputForecast(expected, (largestRecords - burstRecords) / expected, quietRate);
    }

    /** The rate the input is expected at from now on, given the measured {@code rate}. */
    public double expectedRate(double rate) {
        return forecasting && inBurst && settling ? Math.max(rate, burstRate) : rate;
    }
}
