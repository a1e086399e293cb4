package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;
import io.sr3.flink.transport.MeasuredLink;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@link NetworkView} hands the planner for paths nothing has measured. */
class NetworkViewTest {

    private static final int MIB = 1 << 20;

    @Test
    void anUnmeasuredHopCarriesWhatItsSenderWasMeasuredToSendAndAnUnknownSenderTheMedian() {
        NetworkView view = new NetworkView();
        assertThat(view.model().between("h0", "h1")).isEqualTo(NetworkView.DEFAULT_LINK);

        view.toThisNode().recordRoundTrip("h0", Duration.ofMillis(1)); // a round trip says nothing of the rate
        assertThat(view.model().between("h0", "h1")).isEqualTo(NetworkView.DEFAULT_LINK);

        view.toThisNode().recordTransfer("h0", 40 * MIB, Duration.ofSeconds(1));
        view.toThisNode().recordTransfer("h1", 60 * MIB, Duration.ofSeconds(1));
        view.toThisNode().recordTransfer("h2", 200 * MIB, Duration.ofSeconds(1));
        NetworkModel model = view.model();
        assertThat(model.between("h0", "h1").bytesPerSecond()).as("bound by its sender").isEqualTo(40.0 * MIB);
        assertThat(model.between("h2", "h0").bytesPerSecond()).isEqualTo(200.0 * MIB);
        assertThat(model.between("h0", "h1").roundTrip()).isEqualTo(NetworkView.DEFAULT_LINK.roundTrip());
        assertThat(model.between("never-seen", "h1").bytesPerSecond()).as("the median").isEqualTo(60.0 * MIB);
        view.setBetween("h0", "h1", new Link(1e9, Duration.ofMillis(2)));
        assertThat(view.model().between("h0", "h1").bytesPerSecond()).as("a measured path stays measured").isEqualTo(1e9);
    }

    /**
     * Two holders measured at 40 and 150 MB/s from this node, nothing known between them (what
     * passive learning on a loaded, uniform network gives): routing the slow holder's blocks
     * through the fast one must not look better than star because of an optimistic guess.
     */
    @Test
    void linksMeasuredSlowerThanTheLanDefaultDoNotMakeALineThroughAnUnmeasuredHopLookFaster() {
        NetworkView view = new NetworkView();
        view.toThisNode().recordTransfer("h0", 40_000_000, Duration.ofSeconds(1));
        view.toThisNode().recordTransfer("h1", 150_000_000, Duration.ofSeconds(1));
        List<BlockSource> blocks = blocksSplitBetweenH0AndH1();

        RestorePlan plan = new RestorePlanner(2).plan(blocks, view.model(), null);

        assertThat(plan.structure()).as("plan %s", plan.predictedSeconds()).isEqualTo(Structure.STAR);
    }

    /**
     * The same two holders; now h1 reports that it received h0's blocks at 1 GB/s (h1 is h0's
     * replica, and every checkpoint block h0 wrote there was a sample): routing h0's blocks
     * through h1 beats fetching them over h0's own slow link.
     */
    @Test
    void aPathAHolderReportedMakesTheRouteThroughItWinOverStar() {
        NetworkView view = new NetworkView();
        view.toThisNode().recordTransfer("h0", 40_000_000, Duration.ofSeconds(1));
        view.toThisNode().recordTransfer("h1", 150_000_000, Duration.ofSeconds(1));
        List<BlockSource> blocks = blocksSplitBetweenH0AndH1();

        view.hear(new MeasuredLink("h0", "h1", 1e9, Duration.ofSeconds(2)), "h1", "me");

        assertThat(view.model().between("h0", "h1").bytesPerSecond()).isEqualTo(1e9);
        RestorePlan plan = new RestorePlanner(2).plan(blocks, view.model(), null);
        assertThat(plan.structure()).as("plan %s", plan.predictedSeconds()).isNotEqualTo(Structure.STAR);
        assertThat(plan.predictedSeconds().get(plan.structure()))
                .isLessThan(plan.predictedSeconds().get(Structure.STAR));
        assertThat(view.sources(List.of("h0", "h1"))).containsEntry("h0->h1", "rate reported by h1, measured 2 s ago")
                .containsEntry("h0", "rate measured 0 s ago, round trip default");
        assertThat(view.estimates(List.of("h0", "h1"), false)).as("what the restore's log line shows")
                .containsEntry("h0->h1", "1000.0 MB/s: rate reported by h1, measured 2 s ago")
                .containsEntry("h0", "40.0 MB/s: rate measured 0 s ago, round trip default")
                .containsEntry("inbound port", "125.0 MB/s: default");
    }

    @Test
    void theMostRecentlyMeasuredReportOfAPathWins() {
        NetworkView view = new NetworkView();
        view.hear(new MeasuredLink("h0", "h1", 1e9, Duration.ofSeconds(1)), "h1", "me");
        view.hear(new MeasuredLink("h0", "h1", 5e6, Duration.ofSeconds(30)), "h0", "me"); // older: h0's last write to h1

        assertThat(view.model().between("h0", "h1").bytesPerSecond()).isEqualTo(1e9);

        view.hear(new MeasuredLink("h0", "h1", 7e6, Duration.ZERO), "h0", "me");
        assertThat(view.model().between("h0", "h1").bytesPerSecond()).isEqualTo(7e6);
    }

    @Test
    void aHoldersReportOfItsLinkHereStandsInOnlyForWhatThisNodeNeverMeasured() {
        NetworkView view = new NetworkView();
        view.toThisNode().recordTransfer("h0", 40_000_000, Duration.ofSeconds(1));
        view.hear(new MeasuredLink("h0", "me", 900e6, Duration.ZERO), "h0", "me");
        view.hear(new MeasuredLink("h1", "me", 80e6, Duration.ZERO), "h1", "me");
        view.hear(new MeasuredLink("me", "h1", 1e6, Duration.ZERO), "h1", "me"); // this node's own sends: first-hand here

        NetworkModel model = view.model();
        assertThat(model.toRecovering("h0").bytesPerSecond()).as("measured here").isEqualTo(40e6);
        assertThat(model.toRecovering("h1").bytesPerSecond()).as("reported by h1").isEqualTo(80e6);
        assertThat(model.between("h1", "h0").bytesPerSecond()).as("bound by its sender").isEqualTo(80e6);
        assertThat(view.sources(List.of("h1"))).containsEntry("h1", "rate reported by h1, measured 0 s ago, round trip default")
                .containsEntry("inbound port", "default");
    }

    @Test
    void whatANodeReportsIsWhatItMeasuredInBothDirections() {
        NetworkView view = new NetworkView();
        view.toThisNode().recordTransfer("h0", 40_000_000, Duration.ofSeconds(1));
        view.toThisNode().recordRoundTrip("h2", Duration.ofMillis(1)); // no rate: not reported
        view.hear(new MeasuredLink("h3", "h4", 1e9, Duration.ZERO), "h4", "me"); // second-hand: not reported

        assertThat(view.measuredLinks("me")).extracting(MeasuredLink::from, MeasuredLink::to, MeasuredLink::bytesPerSecond)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("h0", "me", 40e6));
    }

    /** 26 blocks of 4 MiB, each held by one holder: the even ones by h0, the odd ones by h1. */
    private static List<BlockSource> blocksSplitBetweenH0AndH1() {
        List<BlockSource> blocks = new ArrayList<>();
        for (int i = 0; i < 26; i++) {
            blocks.add(new BlockSource("b" + i, 4 * MIB, List.of(i % 2 == 0 ? "h0" : "h1")));
        }
        return blocks;
    }
}
