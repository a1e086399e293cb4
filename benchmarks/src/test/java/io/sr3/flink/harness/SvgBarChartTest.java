package io.sr3.flink.harness;

import io.sr3.flink.harness.SvgBarChart.Series;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

/** The SVG of a bar chart is well-formed XML with one bar per present value, its labels escaped, and bad input rejected. */
class SvgBarChartTest {

    private static final List<String> CATEGORIES = List.of("kill → RUNNING", "caught up", "first checkpoint");

    private static SvgBarChart threeBackends() {
        return SvgBarChart.of("Recovery <after> a kill & \"restart\"", "ea82a0b · 2 cores", "seconds", CATEGORIES, List.of(
                new Series("flink-sr3", List.of(17.9, 37.6, 20.9)),
                new Series("RocksDB on file://", List.of(4.97, Double.NaN, 5.75)),
                new Series("RocksDB on HDFS", List.of(4.7, 12.3, 12.7))));
    }

    @Test
    void oneBarPerPresentValueAndAnNaLabelForTheMissingOne() throws Exception {
        ParsedSvg svg = ParsedSvg.parse(threeBackends().toSvg());

        assertThat(svg.bars()).isEqualTo(8);
        assertThat(svg.texts("missing")).containsExactly("n/a");
        assertThat(svg.texts("value")).containsExactly("17.9", "4.97", "4.70", "37.6", "12.3", "20.9", "5.75", "12.7");
        assertThat(svg.elements("rect", "bar")).extracting(e -> e.getAttribute("fill")).containsExactly(
                "#3b75af", "#ef8636", "#519e3e", "#3b75af", "#519e3e", "#3b75af", "#ef8636", "#519e3e");
    }

    @Test
    void titleLegendCategoriesAndUnitAreTheGivenTextEscaped() throws Exception {
        String text = threeBackends().toSvg();
        ParsedSvg svg = ParsedSvg.parse(text);

        assertThat(text).contains("Recovery &lt;after&gt; a kill &amp; &quot;restart&quot;");
        assertThat(svg.texts("title")).containsExactly("Recovery <after> a kill & \"restart\"");
        assertThat(svg.texts("subtitle")).containsExactly("ea82a0b · 2 cores");
        assertThat(svg.texts("legend-label")).containsExactly("flink-sr3", "RocksDB on file://", "RocksDB on HDFS");
        assertThat(svg.elements("rect", "legend")).hasSize(3);
        assertThat(svg.texts("category")).containsExactly("kill → RUNNING", "caught up", "first checkpoint");
        assertThat(svg.texts("unit")).containsExactly("seconds");
    }

    @Test
    void tallerBarsForLargerValuesAndAnAxisThatCoversTheLargest() throws Exception {
        ParsedSvg svg = ParsedSvg.parse(threeBackends().toSvg());
        List<Element> bars = svg.elements("rect", "bar");

        double sr3CaughtUp = Double.parseDouble(bars.get(3).getAttribute("height"));
        double hdfsCaughtUp = Double.parseDouble(bars.get(4).getAttribute("height"));
        assertThat(sr3CaughtUp / hdfsCaughtUp).isCloseTo(37.6 / 12.3, offset(0.02));
        assertThat(svg.texts("tick")).containsExactly("0", "10", "20", "30", "40");
    }

    @Test
    void aReferenceLineIsDrawnWithItsLabelAndRaisesTheAxisToReachIt() throws Exception {
        ParsedSvg svg = ParsedSvg.parse(threeBackends().withReference(50, "bar: 50 s").toSvg());

        assertThat(svg.elements("line", "reference")).hasSize(1);
        assertThat(svg.texts("reference-label")).containsExactly("bar: 50 s");
        assertThat(svg.texts("tick")).last().isEqualTo("50");
    }

    @Test
    void stackedChartsShareOneDocumentOneBelowTheOther() throws Exception {
        SvgBarChart small = SvgBarChart.of("Throughput", "", "records per second", List.of("throughput"),
                List.of(new Series("flink-sr3", List.of(24300.9)))).withHeight(300);
        String text = SvgBarChart.document(List.of(threeBackends(), small));
        ParsedSvg svg = ParsedSvg.parse(text);

        assertThat(svg.document().getDocumentElement().getAttribute("height")).isEqualTo("720");
        assertThat(svg.texts("title")).hasSize(2).last().isEqualTo("Throughput");
        assertThat(svg.bars()).isEqualTo(9);
        assertThat(svg.texts("value")).last().isEqualTo("24,301");
        assertThat(text).contains("<g transform=\"translate(0,420)\">");
    }

    @Test
    void theSameInputGivesTheSameBytes() {
        assertThat(threeBackends().toSvg()).isEqualTo(threeBackends().toSvg());
    }

    @Test
    void longCategoryLabelsWrapAtSpaces() {
        assertThat(SvgBarChart.wrap("task failure → first checkpoint", 100, 12))
                .containsExactly("task failure →", "first", "checkpoint");
        assertThat(SvgBarChart.wrap("short", 100, 12)).containsExactly("short");
    }

    @Test
    void inputThatCannotBeDrawnIsRejectedWithTheReason() {
        Series one = new Series("a", List.of(1.0));
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of(), List.of(new Series("a", List.of()))))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("Bar chart 'T' has no categories: nothing to draw");
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of("x", "y"), List.of(one)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Bar chart 'T': series 'a' has 1 values for the 2 categories [x, y]");
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of("x"), List.of(new Series("a", List.of(-1.0)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a' has -1.0 for category 'x'");
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of("x"),
                List.of(new Series("a", List.of(Double.POSITIVE_INFINITY)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has Infinity for category 'x'");
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of("x"), Collections.nCopies(9, one)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 9 series; it draws 1 to 8");
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of("x"), List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 0 series");
        assertThatThrownBy(() -> new Series("a", java.util.Arrays.asList(1.0, null)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("use NaN for a missing value");
        assertThatThrownBy(() -> SvgBarChart.of(" ", "", "s", List.of("x"), List.of(one)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a title");
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of("x"), List.of(one)).withReference(Double.NaN, "bar"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got NaN for 'bar'");
        assertThatThrownBy(() -> SvgBarChart.of("T", "", "s", List.of("x"), List.of(one)).withHeight(100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("900 x 100 pixels is too small");
        assertThatThrownBy(() -> SvgBarChart.document(List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one chart");
    }

    @Test
    void aChartOfOnlyMissingValuesDrawsNoBarsAndAnAxisFromZeroToOne() throws Exception {
        ParsedSvg svg = ParsedSvg.parse(SvgBarChart.of("T", "", "s", List.of("x", "y"),
                List.of(new Series("a", List.of(Double.NaN, Double.NaN)))).toSvg());

        assertThat(svg.bars()).isZero();
        assertThat(svg.texts("missing")).containsExactly("n/a", "n/a");
        assertThat(svg.texts("tick")).containsExactly("0.0", "0.2", "0.4", "0.6", "0.8", "1.0");
    }
}
