package io.sr3.flink;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/metrics.md is what users graph: every gauge it names is registered, and every registered gauge is in it. */
class MetricsDocTest {

    @Test
    void docsMetricsListsExactlyTheRegisteredGauges() throws Exception {
        Map<String, Gauge<?>> registered = new TreeMap<>();
        // A job that paces, with cost-aware replication, gets every gauge.
        RingMetrics.register(new Capturing("", registered), "job-1", true, new PlannedCopies("job-1", "vertex-1"));

        Path doc = Path.of("..", "docs", "metrics.md");
        Set<String> documented = new TreeSet<>();
        Matcher row = Pattern.compile("^\\| `(sr3\\.[A-Za-z0-9.]+)` \\|", Pattern.MULTILINE).matcher(Files.readString(doc));
        while (row.find()) {
            assertThat(documented.add(row.group(1))).as("%s listed twice", row.group(1)).isTrue();
        }
        assertThat(documented).as("gauges in %s", doc).containsExactlyElementsOf(registered.keySet());
    }

    @Test
    void aJobThatDoesNotPaceGetsNoPacerGauges() {
        Map<String, Gauge<?>> registered = new TreeMap<>();
        RingMetrics.register(new Capturing("", registered), "job-1", false);

        assertThat(registered).isNotEmpty();
        assertThat(registered.keySet()).noneMatch(name -> name.startsWith("sr3.pacing"));
        assertThat(registered.keySet()).as("uniform replication: no plan to show")
                .noneMatch(name -> name.startsWith("sr3.replication"));
    }

    /** Remembers every gauge under its dotted name. */
    private static final class Capturing extends UnregisteredMetricsGroup {
        private final String prefix;
        private final Map<String, Gauge<?>> gauges;

        Capturing(String prefix, Map<String, Gauge<?>> gauges) {
            this.prefix = prefix;
            this.gauges = gauges;
        }

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            gauges.put(prefix + name, gauge);
            return gauge;
        }

        @Override
        public MetricGroup addGroup(String name) {
            return new Capturing(prefix + name + ".", gauges);
        }
    }
}
