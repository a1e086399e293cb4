package io.sr3.flink.cluster;

import io.sr3.flink.cluster.FaultSchedule.Fault;
import io.sr3.flink.cluster.FaultSchedule.Kind;
import io.sr3.flink.cluster.FaultSchedule.Round;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FaultScheduleTest {

    private static final Duration MIN_PAUSE = Duration.ofSeconds(3);
    private static final Duration MAX_PAUSE = Duration.ofSeconds(8);
    private static final Set<Kind> ALL = EnumSet.allOf(Kind.class);

    private static FaultSchedule draw(long seed, int rounds, int replicationFactor) {
        return FaultSchedule.generate(seed, rounds, 5, replicationFactor, ALL, MIN_PAUSE, MAX_PAUSE);
    }

    @Test
    void theSameSeedGivesTheSameSchedule() {
        assertThat(draw(42, 200, 3)).isEqualTo(draw(42, 200, 3));
        assertThat(draw(42, 200, 3).describe()).isEqualTo(draw(42, 200, 3).describe());
    }

    @Test
    void otherSeedsGiveOtherSchedules() {
        Set<List<Round>> schedules = new HashSet<>();
        for (long seed = 0; seed < 20; seed++) {
            schedules.add(draw(seed, 30, 3).rounds());
        }
        assertThat(schedules).hasSize(20);
    }

    @Test
    void aShortRunCoversEveryKindOnce() {
        for (long seed = 0; seed < 50; seed++) {
            FaultSchedule schedule = draw(seed, ALL.size(), 3);
            Set<Kind> kinds = EnumSet.noneOf(Kind.class);
            for (Round round : schedule.rounds()) {
                assertThat(round.faults()).as("seed %d, %s", seed, round).hasSize(1);
                kinds.add(round.faults().get(0).kind());
            }
            assertThat(kinds).as("seed %d", seed).isEqualTo(ALL);
        }
    }

    @Test
    void neverMoreThanReplicationFactorMinusOneFaultsOrDiskLossesInARound() {
        for (int rf = 2; rf <= 4; rf++) {
            for (long seed = 0; seed < 100; seed++) {
                for (Round round : draw(seed, 60, rf).rounds()) {
                    assertThat(round.diskLosses()).as("rf %d, seed %d, %s", rf, seed, round).isLessThanOrEqualTo(rf - 1);
                    assertThat(round.faults().size()).as("rf %d, seed %d, %s", rf, seed, round).isLessThanOrEqualTo(rf - 1);
                    assertThat(round.faults().stream().map(Fault::target).distinct().count())
                            .as("distinct targets, %s", round).isEqualTo(round.faults().size());
                }
            }
        }
    }

    @Test
    void aWholeClusterRestartIsAloneInItsRoundAndTargetsAreInRange() {
        for (long seed = 0; seed < 100; seed++) {
            for (Round round : draw(seed, 60, 3).rounds()) {
                for (Fault fault : round.faults()) {
                    if (fault.kind().wholeCluster()) {
                        assertThat(round.faults()).as("seed %d, %s", seed, round).hasSize(1);
                    } else {
                        assertThat(fault.target()).isBetween(0, 4);
                    }
                    if (fault.kind() == Kind.PAUSE) {
                        assertThat(fault.pause()).isBetween(MIN_PAUSE, MAX_PAUSE);
                    }
                }
            }
        }
    }

    @Test
    void restrictedKindsAreTheOnlyOnesDrawn() {
        Set<Kind> kinds = EnumSet.of(Kind.KILL, Kind.PAUSE);
        FaultSchedule schedule = FaultSchedule.generate(7, 40, 5, 3, kinds, MIN_PAUSE, MAX_PAUSE);
        assertThat(schedule.rounds()).flatExtracting(Round::faults).extracting(Fault::kind).containsOnly(Kind.KILL, Kind.PAUSE);
    }

    @Test
    void rejectsAReplicationFactorThatToleratesNoFault() {
        assertThatThrownBy(() -> draw(1, 3, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replication factor 1");
    }
}
