package io.sr3.flink.testjob;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The expectation of {@link StatefulTestJob} is deterministic and sensitive to lost or repeated records. */
class StatefulTestJobTest {

    private final TestJobSpec spec = TestJobSpec.of("unit").withRecords(1_000, 0).withKeys(7).withPayload(64, 3);

    @Test
    void eventsArePureFunctionsOfTheIndex() {
        Event a = StatefulTestJob.event(123, 7, 64);
        Event b = StatefulTestJob.event(123, 7, 64);
        assertThat(a.key()).isEqualTo(123 % 7);
        assertThat(a.value()).isEqualTo(b.value()).isBetween(0L, 999L);
        assertThat(a.payload()).hasSize(64).isEqualTo(b.payload());
        assertThat(StatefulTestJob.event(124, 7, 64).payload()).isNotEqualTo(a.payload());
    }

    @Test
    void expectedResultsCoverEveryRecordOnce() {
        Map<Integer, KeyResult> expected = StatefulTestJob.expectedResults(spec);
        assertThat(expected).hasSize(7);
        assertThat(expected.values().stream().mapToLong(KeyResult::count).sum()).isEqualTo(1_000);
        long sum = 0;
        for (long i = 0; i < 1_000; i++) {
            sum += StatefulTestJob.value(i);
        }
        assertThat(expected.values().stream().mapToLong(KeyResult::sum).sum()).isEqualTo(sum);
        assertThat(StatefulTestJob.expectedResults(spec)).isEqualTo(expected);
    }

    @Test
    void checksumIsIndependentOfOrderButDetectsARepeatedRecord() {
        SortedMap<Integer, byte[]> forward = new TreeMap<>();
        SortedMap<Integer, byte[]> backward = new TreeMap<>();
        for (long i = 0; i < 50; i++) {
            StatefulTestJob.xorInto(forward, StatefulTestJob.slot(i, spec), StatefulTestJob.payload(i, 64));
            StatefulTestJob.xorInto(backward, StatefulTestJob.slot(49 - i, spec), StatefulTestJob.payload(49 - i, 64));
        }
        assertThat(StatefulTestJob.checksum(forward)).isEqualTo(StatefulTestJob.checksum(backward));

        StatefulTestJob.xorInto(backward, StatefulTestJob.slot(10, spec), StatefulTestJob.payload(10, 64));
        assertThat(StatefulTestJob.checksum(backward)).isNotEqualTo(StatefulTestJob.checksum(forward));
    }

    @Test
    void rejectsInvalidSpecs() {
        assertThatThrownBy(() -> spec.withKeys(0)).hasMessageContaining("keys must be >= 1, was 0");
        assertThatThrownBy(() -> spec.withPayload(-1, 1)).hasMessageContaining("payloadBytes");
    }
}
