package io.sr3.flink.testjob;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ProcessingLogTest {

    @Test
    void aReplayedRecordCountsOnceWithItsFirstProcessing() {
        ProcessingLog log = new ProcessingLog();
        log.record(1_000, 10, 0);
        log.record(1_010, 10, 1);
        // A restart replays both records 4 s later, then processes one that was due meanwhile.
        log.record(5_000, 4_010, 0);
        log.record(5_001, 4_001, 1);
        log.record(5_002, 2_000, 2);

        LatencyHistogram first = log.firstProcessing();

        assertThat(first.count()).isEqualTo(3);
        assertThat(first.quantile(1.0)).isEqualTo(2_000);
        assertThat(first.quantile(0.5)).isEqualTo(10);
    }

    @Test
    void outsideLeavesOutTheRecordsProcessedInAWindow() {
        ProcessingLog log = new ProcessingLog();
        log.record(1_000, 10, 0);
        log.record(5_000, 4_010, 0);

        assertThat(log.outside(List.of(new long[] {4_000, 6_000})).quantile(1.0)).isEqualTo(10);
    }
}
