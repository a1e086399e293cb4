package io.sr3.flink;

import io.sr3.flink.pacing.PacingSettings;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Validation of the {@code sr3.pacing.*} options, through the storage factory as at job start. */
class Sr3PacingOptionsTest {

    @Test
    void offByDefault() {
        assertThat(Sr3PacingOptions.settings(new Configuration())).isNull();
        Sr3CheckpointStorage storage = new Sr3CheckpointStorageFactory().createFromConfig(new Configuration(),
                getClass().getClassLoader());
        assertThat(storage.pacingSettings()).isNull();
    }

    @Test
    void capturesTheSettingsWithDefaults() {
        Configuration c = enabled("2 min");
        c.setString("heartbeat.timeout", "5 s");
        c.setString("rest.address", "jm.example");
        c.setString("rest.port", "18081");
        c.setString("metrics.fetcher.update-interval", "1 s");

        PacingSettings settings = new Sr3CheckpointStorageFactory().createFromConfig(c, getClass().getClassLoader())
                .pacingSettings();

        assertThat(settings).isNotNull();
        assertThat(settings.maxRecoveryTime()).isEqualTo(Duration.ofMinutes(2));
        assertThat(settings.failureDetection()).isEqualTo(Duration.ofSeconds(5));
        assertThat(settings.restUrl()).isEqualTo("http://jm.example:18081");
        assertThat(settings.decisionPeriod()).isEqualTo(Duration.ofMillis(500));
        assertThat(settings.mtbf()).isEqualTo(Duration.ofDays(1));
        assertThat(settings.peakMemory()).isEqualTo(Duration.ofMinutes(10));
    }

    @Test
    void aPeakMemoryThatIsNotAPositiveDurationNamesKeyAndValue() {
        Configuration zero = enabled("2 min");
        zero.setString("heartbeat.timeout", "5 s");
        zero.setString("sr3.pacing.peak-memory", "0 s");
        assertThatThrownBy(() -> Sr3PacingOptions.settings(zero))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'0 s'").hasMessageContaining("'sr3.pacing.peak-memory'");
        Configuration word = enabled("2 min");
        word.setString("heartbeat.timeout", "5 s");
        word.setString("sr3.pacing.peak-memory", "a while");
        assertThatThrownBy(() -> Sr3PacingOptions.settings(word))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'a while'").hasMessageContaining("'sr3.pacing.peak-memory'");
    }

    @Test
    void aBoundThatIsNotAPositiveDurationNamesKeyAndValue() {
        assertThatThrownBy(() -> Sr3PacingOptions.settings(enabled("0 s")))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'0 s'").hasMessageContaining("'sr3.pacing.max-recovery-time'");
        assertThatThrownBy(() -> Sr3PacingOptions.settings(enabled("soon")))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'soon'").hasMessageContaining("'sr3.pacing.max-recovery-time'");
        Configuration missing = new Configuration();
        missing.setString("sr3.pacing.enabled", "true");
        missing.setString("execution.checkpointing.interval", "1 min");
        assertThatThrownBy(() -> Sr3PacingOptions.settings(missing))
                .hasMessageContaining("sr3.pacing.max-recovery-time");
    }

    @Test
    void aBoundShorterThanFailureDetectionNamesBoth() {
        Configuration c = enabled("10 s");
        c.setString("sr3.pacing.failure-detection-time", "15 s");
        assertThatThrownBy(() -> new Sr3CheckpointStorageFactory().createFromConfig(c, getClass().getClassLoader()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'10 s'").hasMessageContaining("'sr3.pacing.max-recovery-time'")
                .hasMessageContaining("sr3.pacing.failure-detection-time = 15 s");
        // Default detection is Flink's heartbeat timeout (50 s unless set).
        assertThatThrownBy(() -> Sr3PacingOptions.settings(enabled("30 s")))
                .hasMessageContaining("heartbeat.timeout");
    }

    @Test
    void pacingKeysAreKnownToTheSr3Validation() {
        Configuration c = enabled("2 min");
        c.setString("heartbeat.timeout", "5 s");
        assertThat(Sr3Options.nodeConfig(c)).isNotNull();
    }

    @Test
    void needsFlinksPeriodicCheckpointsAsTheSafetyMaximum() {
        Configuration c = enabled("2 min");
        c.removeConfig(org.apache.flink.configuration.CheckpointingOptions.CHECKPOINTING_INTERVAL);
        assertThatThrownBy(() -> Sr3PacingOptions.settings(c))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("execution.checkpointing.interval");
    }

    private static Configuration enabled(String bound) {
        Configuration c = new Configuration();
        c.setString("execution.checkpointing.interval", "1 min");
        c.setString("sr3.pacing.enabled", "true");
        c.setString("sr3.pacing.max-recovery-time", bound);
        return c;
    }
}
