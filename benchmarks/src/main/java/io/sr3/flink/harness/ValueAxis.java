package io.sr3.flink.harness;

import javax.annotation.concurrent.Immutable;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The value axis of a bar chart: from 0 to a "nice" top (1, 2, 2.5 or 5 times a power of ten per
 * tick, 3 to 5 ticks above 0) that covers the largest value, so tick labels read as round numbers.
 *
 * @param top the axis maximum, a whole number of steps, above 0
 * @param step the distance between two ticks, above 0
 */
@Immutable
record ValueAxis(double top, double step) {

    /** Aim for this many intervals at most; rounding the step up makes it 3 to 5. */
    private static final int TARGET_TICKS = 5;

    ValueAxis {
        if (!(top > 0) || !(step > 0) || Double.isInfinite(top)) {
            throw new IllegalArgumentException("A value axis needs a finite top and step above 0, got top " + top
                    + " and step " + step);
        }
    }

    /** The axis for values up to {@code max} (not negative; 0 or NaN gives the axis 0 to 1). */
    static ValueAxis covering(double max) {
        if (!(max > 0)) {
            return new ValueAxis(1, 0.2);
        }
        double step = niceStep(max / TARGET_TICKS);
        double top = Math.ceil(max / step - 1e-9) * step;
        return new ValueAxis(top, step);
    }

    /** The smallest of 1, 2, 2.5, 5 and 10 times a power of ten that is at least {@code raw}. */
    static double niceStep(double raw) {
        double power = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double factor : new double[] {1, 2, 2.5, 5, 10}) {
            if (factor * power >= raw * (1 - 1e-9)) {
                return factor * power;
            }
        }
        return 10 * power;
    }

    /** The tick values from 0 to {@code top}, both included. */
    List<Double> ticks() {
        List<Double> ticks = new ArrayList<>();
        long count = Math.round(top / step);
        for (long i = 0; i <= count; i++) {
            ticks.add(i * step);
        }
        return ticks;
    }

    /** A tick label with as many decimals as the step needs ("0.25", "2", "1,500"). */
    String tickLabel(double value) {
        int decimals = 0;
        while (decimals < 6 && Math.abs(step * Math.pow(10, decimals) - Math.rint(step * Math.pow(10, decimals))) > 1e-6) {
            decimals++;
        }
        return String.format(Locale.ROOT, "%,." + decimals + "f", value);
    }

    /** A bar's value label with three significant digits at most ("37.6", "4.97", "0.085", "26,816"). */
    static String valueLabel(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        double magnitude = Math.abs(value);
        String pattern = magnitude >= 100 || magnitude == 0 ? "%,.0f" : magnitude >= 10 ? "%.1f"
                : magnitude >= 1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, pattern, value);
    }
}
