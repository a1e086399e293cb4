package io.sr3.flink;

import io.sr3.flink.replication.ReplicationMode;
import io.sr3.flink.replication.ReplicationSettings;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Validation of the {@code sr3.replication.*} options into the policy's settings. */
class Sr3ReplicationOptionsTest {

    @Test
    void defaultsAreTodaysUniformReplication() {
        assertThat(Sr3ReplicationOptions.settings(new Configuration(), 2, 2))
                .isEqualTo(new ReplicationSettings(ReplicationMode.UNIFORM, 2.0, 2, 3, 2));
        assertThat(Sr3ReplicationOptions.settings(new Configuration(), 3, 2))
                .isEqualTo(new ReplicationSettings(ReplicationMode.UNIFORM, 3.0, 2, 4, 3));
        assertThat(Sr3ReplicationOptions.settings(new Configuration(), 16, 1).maxCopies()).isEqualTo(16);
        assertThat(Sr3ReplicationOptions.interval(new Configuration())).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void readsCostAwareSettings() {
        Configuration c = config("sr3.replication.mode", "cost-aware");
        c.setString("sr3.replication.budget", "2.3");
        c.setString("sr3.replication.max-copies", "4");
        c.setString("sr3.replication.interval", "1 min");

        assertThat(Sr3ReplicationOptions.settings(c, 2, 2))
                .isEqualTo(new ReplicationSettings(ReplicationMode.COST_AWARE, 2.3, 2, 4, 2));
        assertThat(Sr3ReplicationOptions.interval(c)).isEqualTo(Duration.ofMinutes(1));
        assertThat(Sr3ReplicationOptions.settings(config("sr3.replication.mode", "uniform"), 2, 2).mode())
                .isEqualTo(ReplicationMode.UNIFORM);
    }

    @Test
    void minCopiesNeverFallBelowTheWriteQuorum() {
        assertThat(Sr3ReplicationOptions.settings(config("sr3.replication.min-copies", "1"), 3, 2).minCopies())
                .isEqualTo(2);
        assertThat(Sr3ReplicationOptions.settings(config("sr3.replication.min-copies", "1"), 3, 1).minCopies())
                .isEqualTo(1);
        assertThat(Sr3ReplicationOptions.settings(config("sr3.replication.min-copies", "3"), 3, 2).minCopies())
                .isEqualTo(3);
    }

    @Test
    void badValuesNameTheOption() {
        assertRejected("sr3.replication.mode", "smart", "'uniform' or 'cost-aware'");
        assertRejected("sr3.replication.budget", "lots", "a number");
        assertRejected("sr3.replication.budget", "1.5", "at least the minimum copies, 2");
        assertRejected("sr3.replication.budget", "NaN", "at least the minimum copies");
        assertRejected("sr3.replication.budget", "Infinity", "at least the minimum copies");
        assertRejected("sr3.replication.min-copies", "0", "between 1 and sr3.ring.replication-factor (2)");
        assertRejected("sr3.replication.min-copies", "3", "between 1 and sr3.ring.replication-factor (2)");
        assertRejected("sr3.replication.min-copies", "two", "an integer");
        assertRejected("sr3.replication.max-copies", "1", "between sr3.ring.replication-factor (2) and 16");
        assertRejected("sr3.replication.max-copies", "17", "between sr3.ring.replication-factor (2) and 16");
        assertRejected("sr3.replication.interval", "0 s", "a positive duration");
        assertRejected("sr3.replication.interval", "soon", "a duration");
    }

    @Test
    void aBudgetBelowARaisedMinimumNamesTheBudget() {
        Configuration c = config("sr3.replication.min-copies", "3");
        c.setString("sr3.replication.budget", "2.5");
        assertThatThrownBy(() -> Sr3ReplicationOptions.settings(c, 3, 1))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessage("Invalid value '2.5' for flink-sr3 option 'sr3.replication.budget': must be at least the "
                        + "minimum copies, 3 (sr3.replication.min-copies, never below sr3.ring.min-replicas)");
    }

    @Test
    void theOptionsAreKnownToTheRingConfiguration() {
        assertThat(Sr3Options.all()).containsAll(Sr3ReplicationOptions.all());
        Configuration c = config("sr3.replication.mode", "cost-aware");
        c.setString("sr3.replication.budget", "2.3");
        assertThat(Sr3Options.nodeConfig(c)).isNotNull(); // no "Unknown flink-sr3 option"
    }

    private static void assertRejected(String key, String value, String rule) {
        assertThatThrownBy(() -> Sr3ReplicationOptions.settings(config(key, value), 2, 2))
                .as("%s: %s", key, value)
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'" + value + "'").hasMessageContaining("'" + key + "'")
                .hasMessageContaining(rule);
    }

    private static Configuration config(String key, String value) {
        Configuration c = new Configuration();
        c.setString(key, value);
        return c;
    }
}
