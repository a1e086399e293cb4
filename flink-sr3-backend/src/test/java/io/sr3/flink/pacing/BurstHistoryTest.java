package io.sr3.flink.pacing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class BurstHistoryTest {

    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    /** One rate sample per second, each the mean over the second before it. */
    private final BurstHistory history = new BurstHistory(Duration.ofMinutes(1), Duration.ofSeconds(1));
    private int second;
    private long sourceRecords;

    /**
     * 5 s at 2,000/s between quiet phases at 300/s: 10,000 records, and the 300 of the quiet
     * second whose sample ends the burst.
     */
    @Test
    void learnsHowManyRecordsBurstsBringAndTheRateBetweenThem() {
        assertThat(history.outlook(T0)).as("no burst seen yet").isNull();

        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        BurstOutlook quiet = history.outlook(now());
        assertThat(quiet).isNotNull();
        assertThat(quiet.inBurst()).isFalse();
        assertThat(quiet.largestRecords()).isEqualTo(10_300);

        feed(2, 2000);
        BurstOutlook inBurst = history.outlook(now());
        assertThat(inBurst.inBurst()).isTrue();
        assertThat(inBurst.burstRecords()).isEqualTo(4000);
        assertThat(inBurst.quietRate()).as("the mean of the quiet phase before it").isEqualTo(300);
    }

    /**
     * The second burst brings as many records, but at first the sources read a lag at 3,200/s and
     * then the burst is back-pressured to 1,600/s: it lasts longer at a lower rate, and its size
     * is counted in records.
     */
    @Test
    void aBurstsRemainderIsTheRecordsItLacksToTheLargest() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        feed(1, 3200, true);
        feed(2, 1600, true);

        BurstOutlook outlook = history.outlook(now());
        assertThat(outlook.burstRecords()).isEqualTo(6400);
    }

    @Test
    void aHighRateAtTheJobsStartIsNoBurst() {
        feed(3, 2000); // the sources start behind and catch up
        feed(8, 300);

        assertThat(history.outlook(now())).isNull();
    }

    @Test
    void aBurstLargerThanAnyRememberedIsExpectedToLast() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        feed(6, 2000);
        BurstOutlook outlook = history.outlook(now());

        assertThat(outlook.burstRecords()).isEqualTo(12_000);
        assertThat(outlook.burstToWaitOut()).as("maybe a new level of load").isFalse();
    }

    @Test
    void aRestartInterruptsTheBurstWhoseLengthIsThenUnknown() {
        feed(8, 300);
        feed(3, 2000);
        history.interrupt();
        feed(8, 300);

        assertThat(history.outlook(now())).as("the interrupted burst is not remembered").isNull();
    }

    @Test
    void afterARestartABurstAlreadyRunningHasNoKnownStart() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        feed(2, 2000);
        history.interrupt();
        feed(4, 2000);
        BurstOutlook outlook = history.outlook(now());
        assertThat(outlook.inBurst()).isTrue();
        assertThat(outlook.burstRecords()).as("its start is unknown: taken as the first sample seen").isEqualTo(6000);

        feed(8, 300);
        assertThat(history.outlook(now()).largestRecords()).as("the interrupted burst is not remembered")
                .isEqualTo(10_300);
    }

    /** A failure late in a quiet phase: the replay and the rate window after it reach into the next burst. */
    @Test
    void aBurstRightAfterARestartExpectsTheQuietRateOfBeforeTheRestart() {
        feed(8, 300);
        feed(5, 2000);
        feed(6, 300);
        history.interrupt();
        feed(3, 2000);

        BurstOutlook outlook = history.outlook(now());
        assertThat(outlook.inBurst()).isTrue();
        assertThat(outlook.quietRate()).as("not the midpoint, 1,150/s").isEqualTo(300);
    }

    /**
     * After a burst the sources read its lag at the job's capacity, 4,000/s; the next burst comes
     * at 1,800/s, all the job takes while it is back-pressured.
     */
    @Test
    void aLagReadUnderBackPressureDoesNotHideTheNextBurst() {
        feed(8, 300);
        feed(5, 2000);
        feed(2, 4000, true);
        feed(8, 300);
        feed(2, 1800, true);

        assertThat(history.outlook(now()).inBurst()).as("1,800/s is above the midpoint of 300/s and 2,000/s").isTrue();
    }

    @Test
    void aPauseUnderBackPressureDoesNotSplitABurst() {
        feed(8, 300);
        feed(2, 2000, true);
        feed(1, 400, true); // a checkpoint paused the job: the sources read little
        feed(3, 2000, true);
        feed(8, 300);

        assertThat(history.outlook(now()).largestRecords()).isEqualTo(10_700);
    }

    @Test
    void aSourceCountThatGoesBackIsANewAttempt() {
        feed(8, 300);
        feed(3, 2000);
        sourceRecords = 0; // a restart the pacer did not see as such
        feed(8, 300);

        assertThat(history.outlook(now())).as("the burst of the old attempt has no known size").isNull();
    }

    @Test
    void burstsAreForgottenAfterTheMemory() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        assertThat(history.outlook(now())).isNotNull();

        feed(60, 300);
        assertThat(history.outlook(now())).isNull();
    }

    @Test
    void aSteadyLoadHasNoBursts() {
        for (int i = 0; i < 30; i++) {
            feed(1, 1000 + (i % 3) * 10);
        }
        assertThat(history.outlook(now())).as("noise around the midpoint is no burst").isNull();
    }

    /** The quiet rates of the pacing benchmark at 300 records/s: 292-315/s. */
    @Test
    void noiseInTheQuietPhaseDoesNotMakeTheRealBurstLookLargerThanAnyRemembered() {
        for (int i = 0; i < 8; i++) {
            feed(1, i % 2 == 0 ? 292 : 315);
        }
        assertThat(history.outlook(now())).isNull();

        feed(5, 2000);
        feed(8, 300);
        feed(2, 2000);
        BurstOutlook outlook = history.outlook(now());
        assertThat(outlook.largestRecords()).as("the first burst and its ending quiet second").isEqualTo(10_300);
        assertThat(outlook.burstToWaitOut()).isTrue();
    }

    /**
     * The input moves from 300/s into a burst: a sample at 900/s, 3x the quiet rate but below the
     * midpoint, then the burst's first sample, whose window still held quiet time, are settling;
     * the burst's next sample, the quiet rate and the burst's end are not.
     */
    @Test
    void theMoveFromTheQuietRateIntoABurstIsSettling() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        assertThat(history.outlook(now()).settling()).as("at the quiet rate").isFalse();
        feed(1, 420);
        assertThat(history.outlook(now()).settling()).as("420/s: noise, less than 1.5x 300/s").isFalse();

        feed(1, 900);
        assertThat(history.outlook(now()).settling()).as("900/s: 1.5x the quiet rate or more").isTrue();
        assertThat(history.outlook(now()).inBurst()).isFalse();
        feed(1, 2000);
        assertThat(history.outlook(now()).inBurst()).isTrue();
        assertThat(history.outlook(now()).settling()).as("the burst's first rate window").isTrue();
        feed(1, 2000);
        assertThat(history.outlook(now()).settling()).as("a whole rate window inside the burst").isFalse();
        feed(1, 900);
        assertThat(history.outlook(now()).settling()).as("the end of a burst is no onset").isFalse();
        feed(3, 300);
        assertThat(history.outlook(now()).settling()).isFalse();

        history.interrupt();
        assertThat(history.outlook(now()).settling()).as("after a restart, before a sample").isTrue();
        feed(1, 300);
        assertThat(history.outlook(now()).settling()).as("the quiet rate again").isFalse();
        history.interrupt();
        feed(1, 900);
        assertThat(history.outlook(now()).settling()).as("after a restart, against the last quiet phase's rate")
                .isTrue();
    }

    /**
     * {@code seconds} samples at {@code rate}, one per second, as LoadMemory feeds them; the
     * sources' count grows by the rate each second.
     */
    private void feed(int seconds, double rate) {
        feed(seconds, rate, false);
    }

    private void feed(int seconds, double rate, boolean backPressured) {
        for (int i = 0; i < seconds; i++) {
            second++;
            sourceRecords += Math.round(rate);
            history.record(now(), rate, backPressured, sourceRecords);
        }
    }

    private Instant now() {
        return T0.plusSeconds(second);
    }
}
