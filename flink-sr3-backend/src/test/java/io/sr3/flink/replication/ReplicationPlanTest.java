package io.sr3.flink.replication;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/** The plan as TaskManagers receive it: lookups, the wire layout and its rejection of bad bytes. */
class ReplicationPlanTest {

    private static final long MIB = 1024 * 1024;
    private static final RecoveryFacts FACTS = new RecoveryFacts(100_000_000, Duration.ofSeconds(10),
            Duration.ofSeconds(15));

    private static ReplicationPlan sample() {
        OperatorCost window = FailureCostModel.cost(new OperatorProfile("b7e2", "Window(TumblingEventTime) → Sink",
                4, 10 * MIB, 8000, 10_000, 8), FACTS);
        OperatorCost overloaded = FailureCostModel.cost(new OperatorProfile("a1c0", "Join", 2, 40 * MIB, 3000, 2000,
                2), FACTS);
        OperatorCost dedup = FailureCostModel.cost(new OperatorProfile("c3d4", "Dedup", 1, 0, 10,
                Double.POSITIVE_INFINITY, 1), FACTS);
        return ReplicationPlan.of(2, List.of(
                new ReplicaChoice("b7e2", "Window(TumblingEventTime) → Sink", 3, 2, window, "at max-copies"),
                new ReplicaChoice("c3d4", "Dedup", 2, 2, dedup, "no state in the latest checkpoint"),
                new ReplicaChoice("a1c0", "Join", 2, 1, overloaded, "budget exhausted")));
    }

    @Test
    void looksUpChoicesSortedByVertex() {
        ReplicationPlan plan = sample();

        assertThat(plan.choices()).extracting(ReplicaChoice::vertexId).containsExactly("a1c0", "b7e2", "c3d4");
        assertThat(plan.copiesFor("b7e2")).hasValue(3);
        assertThat(plan.copiesFor("unknown")).isEmpty();
        assertThat(plan.meanCopies()).isEqualTo((3 * 10 + 2 * 40) / 50.0);
        assertThat(ReplicationPlan.uniform(2).meanCopies()).isEqualTo(2.0);
        assertThat(ReplicationPlan.uniform(2).copiesFor("b7e2")).isEmpty();
    }

    @Test
    void roundTrips() throws IOException {
        for (ReplicationPlan plan : List.of(sample(), ReplicationPlan.uniform(1), ReplicationPlan.uniform(16))) {
            byte[] bytes = plan.encode();
            ReplicationPlan decoded = ReplicationPlan.decode(bytes);
            assertThat(decoded).isEqualTo(plan);
            assertThat(decoded.choices()).isEqualTo(plan.choices());
            assertThat(decoded.defaultCopies()).isEqualTo(plan.defaultCopies());
            assertThat(decoded.encode()).isEqualTo(bytes);
        }
        assertThat(ReplicationPlan.decode(sample().encode()).choices().get(0).cost().replaySeconds())
                .isInfinite();
    }

    @Test
    void everyTruncationIsRejectedWithTheOffset() {
        byte[] bytes = sample().encode();
        for (int length = 0; length < bytes.length; length++) {
            byte[] prefix = Arrays.copyOf(bytes, length);
            assertThatThrownBy(() -> ReplicationPlan.decode(prefix)).as("first %d bytes", length)
                    .isInstanceOf(IOException.class)
                    .hasMessageMatching("(Truncated|Malformed) sr3 replication plan.*")
                    .hasMessageContaining("byte");
        }
        int cut = bytes.length - 1; // inside the last choice's last double, which starts 8 bytes before the end
        assertThatThrownBy(() -> ReplicationPlan.decode(Arrays.copyOf(bytes, cut))).hasMessage(
                "Truncated sr3 replication plan: " + cut + " bytes end inside the choice 2 (at byte " + (cut - 7) + ")");
    }

    @Test
    void aWrongMagicIsRejected() {
        byte[] bytes = sample().encode();
        bytes[0] = 'X';
        assertThatThrownBy(() -> ReplicationPlan.decode(bytes)).isInstanceOf(IOException.class)
                .hasMessageStartingWith("Not an sr3 replication plan: magic 0x58523350, expected 0x53523350");
        assertThatThrownBy(() -> ReplicationPlan.decode("hello world, not a plan".getBytes()))
                .isInstanceOf(IOException.class).hasMessageStartingWith("Not an sr3 replication plan");
    }

    @Test
    void anUnknownVersionIsRejected() {
        byte[] bytes = sample().encode();
        bytes[4] = (byte) (PlanCodec.VERSION + 1);
        assertThatThrownBy(() -> ReplicationPlan.decode(bytes)).isInstanceOf(IOException.class)
                .hasMessageStartingWith("Unsupported sr3 replication plan version 2: this build reads versions 1 to 1");
        bytes[4] = 0;
        assertThatThrownBy(() -> ReplicationPlan.decode(bytes)).hasMessageContaining("version 0");
    }

    @Test
    void trailingBytesHugeCountsAndImpossibleValuesAreRejected() {
        byte[] bytes = sample().encode();
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 3);
        assertThatThrownBy(() -> ReplicationPlan.decode(longer)).isInstanceOf(IOException.class)
                .hasMessageContaining("3 trailing bytes after 3 choices");
        byte[] huge = ReplicationPlan.uniform(2).encode();
        ByteBuffer.wrap(huge).putInt(6, Integer.MAX_VALUE);
        assertThatThrownBy(() -> ReplicationPlan.decode(huge)).isInstanceOf(IOException.class)
                .hasMessageContaining("choice count 2147483647");
        byte[] noCopies = ReplicationPlan.uniform(2).encode();
        noCopies[5] = 0;
        assertThatThrownBy(() -> ReplicationPlan.decode(noCopies)).isInstanceOf(IOException.class)
                .hasMessageContaining("Invalid sr3 replication plan").hasMessageContaining("defaultCopies");
    }

    /** Damage anywhere gives a plan or an IOException, never another exception. */
    @Test
    void randomDamageNeverEscapesAsAnotherException() {
        byte[] bytes = sample().encode();
        Random random = new Random(22);
        for (int trial = 0; trial < 5000; trial++) {
            byte[] damaged = bytes.clone();
            for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
                damaged[random.nextInt(damaged.length)] ^= (byte) (1 << random.nextInt(8));
            }
            try {
                ReplicationPlan.decode(damaged);
            } catch (IOException expected) {
                assertThat(expected.getMessage()).contains("sr3 replication plan");
            } catch (RuntimeException e) {
                fail("trial " + trial + ": " + e, e);
            }
        }
    }

    @Test
    void theLogLineSaysWhatWasChosenAndWhy() {
        ReplicationPlan plan = sample();

        assertThat(plan.logLine(plan.choices().get(1))).isEqualTo("Replication of operator "
                + "'Window(TumblingEventTime) → Sink' (vertex b7e2): failure cost 881.0 stalled subtask-s "
                + "(restore 0.03 s, replay 100.1 s, failover region 8 subtasks), state 10.0 MiB, 3 copies in 2 zones: "
                + "at max-copies");
        assertThat(plan.logLine(plan.choices().get(0))).contains("failure cost unbounded (input outpaces capacity)",
                "replay unbounded", "state 40.0 MiB", "2 copies in 1 zone: budget exhausted");
        assertThat(plan.logLines()).hasSize(3);
    }
}
