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

    @Test
    void dueFromLeavesOutTheRecordsDueEarlier() {
        ProcessingLog log = new ProcessingLog();
        log.record(1_000, 900, 0); // due at 100: warm-up
        log.record(3_000, 10, 1); // due at 2,990

        ProcessingLog measured = log.dueFrom(2_000);

        assertThat(measured.all().count()).isEqualTo(1);
        assertThat(measured.all().quantile(1.0)).isEqualTo(10);
        assertThat(log.all().count()).isEqualTo(2);
    }

    /**
     * A failure at 1,000; the source is back on schedule at 3,000, but the records it emitted just
     * before wait in the job's buffers until 3,400.
     */
    @Test
    void theOutputCatchesUpWhenTheLastRecordDueBeforeTheSourceCaughtUpIsProcessed() {
        ProcessingLog log = new ProcessingLog();
        log.record(900, 5, 0); // before the failure
        log.record(3_100, 2_200, 1); // due at 900, replayed
        log.record(3_400, 450, 2); // due at 2,950: the last one due before 3,000
        log.record(3_410, 400, 3); // due at 3,010: on schedule
        log.record(9_000, 8_000, 4); // due at 1,000 but after the next failure at 8,000

        assertThat(log.outputCaughtUp(1_000, 3_000, 8_000)).isEqualTo(3_400);
        assertThat(log.outputCaughtUp(1_000, 3_500, 8_000)).as("nothing due before it is processed later")
                .isEqualTo(3_500);
    }
}
