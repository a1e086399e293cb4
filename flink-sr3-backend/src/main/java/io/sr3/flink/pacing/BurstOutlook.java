package io.sr3.flink.pacing;

/**
 * What the job's recent input says about bursts ({@link BurstHistory}), for the recovery model's
 * input forecast.
 *
 * @param longestSeconds the longest burst that ended within {@code sr3.pacing.peak-memory}
 * @param inBurst whether the input is in a burst now
 * @param burstSeconds how long the current burst has lasted (0 outside a burst)
 * @param quietRate the mean input rate between the bursts, before the current one: where the
 *     input is expected to return when the burst ends
 */
public record BurstOutlook(double longestSeconds, boolean inBurst, double burstSeconds, double quietRate) {

    public BurstOutlook {
        if (!(longestSeconds > 0) || Double.isInfinite(longestSeconds)) {
            throw new IllegalArgumentException("longestSeconds must be finite and > 0, was " + longestSeconds);
        }
        if (!(burstSeconds >= 0) || !(quietRate >= 0) || Double.isInfinite(quietRate)) {
            throw new IllegalArgumentException("burstSeconds and quietRate must be >= 0, were " + burstSeconds + " and "
                    + quietRate);
        }
    }

    /**
     * The input from now on, at the current {@code rate}: the rest of a burst no longer than the
     * longest remembered, then the quiet rate; the current rate for ever outside a burst, or once
     * the burst has lasted longer than any remembered one (it may be a new level of load).
     */
    public InputForecast forecast(double rate) {
        if (!inBurst || burstSeconds >= longestSeconds) {
            return InputForecast.constant(rate);
        }
        return new InputForecast(rate, longestSeconds - burstSeconds, quietRate);
    }
}
