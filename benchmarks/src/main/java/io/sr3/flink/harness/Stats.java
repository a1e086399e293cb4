package io.sr3.flink.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Mean, median, 99th percentile, min and max of a sample, and byte/time formatting for printed lines
 * (in {@link Locale#ROOT}, so result files read the same whatever the JVM's locale).
 */
public record Stats(int count, double mean, double median, double p99, double min, double max) {

    public static Stats of(List<? extends Number> values) {
        if (values.isEmpty()) {
            return new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        List<Double> sorted = new ArrayList<>(values.size());
        double sum = 0;
        for (Number v : values) {
            sorted.add(v.doubleValue());
            sum += v.doubleValue();
        }
        Collections.sort(sorted);
        int n = sorted.size();
        double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
        double p99 = sorted.get(Math.min(n - 1, (int) Math.ceil(0.99 * n) - 1)); // nearest rank
        return new Stats(n, sum / n, median, p99, sorted.get(0), sorted.get(n - 1));
    }

    /** "12.3 MiB", "512 B". */
    public static String bytes(double bytes) {
        if (Double.isNaN(bytes)) {
            return "n/a";
        }
        String[] units = {"B", "KiB", "MiB", "GiB"};
        int unit = 0;
        double value = bytes;
        while (Math.abs(value) >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return unit == 0 ? String.format(Locale.ROOT, "%.0f %s", value, units[unit])
                : String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }

    /** "1.23 s" or "850 ms". */
    public static String millis(double millis) {
        if (Double.isNaN(millis)) {
            return "n/a";
        }
        return millis >= 1000 ? String.format(Locale.ROOT, "%.2f s", millis / 1000)
                : String.format(Locale.ROOT, "%.0f ms", millis);
    }
}
