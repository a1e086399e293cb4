package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;
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
        List<BlockSource> blocks = new ArrayList<>();
        for (int i = 0; i < 26; i++) {
            blocks.add(new BlockSource("b" + i, 4 * MIB, List.of(i % 2 == 0 ? "h0" : "h1")));
        }

        RestorePlan plan = new RestorePlanner(2).plan(blocks, view.model(), null);

        assertThat(plan.structure()).as("plan %s", plan.predictedSeconds()).isEqualTo(Structure.STAR);
    }
}
