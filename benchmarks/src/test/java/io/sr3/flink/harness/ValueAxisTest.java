package io.sr3.flink.harness;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

/** The value axis ends on a round number just above the largest value, in 4 to 8 round steps. */
class ValueAxisTest {

    @ParameterizedTest(name = "max {0}: 0 to {1} in steps of {2}, top label {3}")
    @CsvSource({
            "37.6,    40,     10,    40",
            "8,       8,      2,     8",
            "100,     100,    20,    100",
            "0.1122,  0.125,  0.025, 0.125",
            "3607.5,  4000,   1000,  '4,000'",
            "1.01,    1.25,   0.25,  1.25",
            "0,       1,      0.2,   1.0",
    })
    void coversTheMaximumWithANiceStep(double max, double top, double step, String topLabel) {
        ValueAxis axis = ValueAxis.covering(max);

        assertThat(axis.step()).isCloseTo(step, offset(1e-12));
        assertThat(axis.top()).isCloseTo(top, offset(1e-12));
        assertThat(axis.ticks().get(axis.ticks().size() - 1)).isGreaterThanOrEqualTo(max);
        assertThat(axis.tickLabel(axis.top())).isEqualTo(topLabel);
        assertThat(axis.ticks().size() - 1).isBetween(3, 5);
    }

    @ParameterizedTest
    @CsvSource({"26816, '26,816'", "37.635, 37.6", "4.966, 4.97", "0.0845, 0.085", "0, 0", "NaN, n/a"})
    void valueLabelsKeepThreeSignificantDigits(double value, String label) {
        assertThat(ValueAxis.valueLabel(value)).isEqualTo(label);
    }
}
