package io.sr3.flink.pacing;

/**
 * The input a job is expected to receive from some moment on: {@code rate} records/s for
 * {@code seconds}, then {@code thenRate} for ever. A constant forecast has infinite
 * {@code seconds}; a burst expected to end has its remaining length there and the rate between
 * bursts as {@code thenRate}.
 */
public record InputForecast(double rate, double seconds, double thenRate) {

    public InputForecast {
        if (!(rate >= 0) || Double.isInfinite(rate) || !(thenRate >= 0) || Double.isInfinite(thenRate)) {
            throw new IllegalArgumentException("rates must be finite and >= 0, were " + rate + " and " + thenRate);
        }
        if (!(seconds >= 0)) {
            throw new IllegalArgumentException("seconds must be >= 0, was " + seconds);
        }
    }

    /** The current rate for ever: the model of DESIGN section 6. */
    public static InputForecast constant(double rate) {
        return new InputForecast(rate, Double.POSITIVE_INFINITY, rate);
    }

    /** Records expected within the next {@code h} seconds. */
    public double recordsWithin(double h) {
        if (h <= seconds) {
            return rate * h;
        }
        return rate * seconds + thenRate * (h - seconds);
    }

    /** The forecast as seen {@code h} seconds later. */
    public InputForecast after(double h) {
        return new InputForecast(rate, Math.max(0, seconds - h), thenRate);
    }

    /** Whether the rate changes at some point. */
    public boolean ends() {
        return seconds != Double.POSITIVE_INFINITY;
    }
}
