package io.sr3.flink.harness;

import javax.annotation.concurrent.Immutable;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A grouped bar chart written as SVG text, so benchmark results come with a picture that GitHub
 * renders and that diffs as text: one group of bars per category, one colour per series with a
 * legend, a value axis from 0 with round ticks and a unit, each bar's value above it, and optional
 * dashed reference lines (a bound, a bar to beat).
 *
 * <p>A missing value is {@code NaN}: it gets no bar, only an "n/a" label on the baseline, so a
 * missing measurement never looks like a zero. Values are otherwise finite and not negative (the
 * bars start at 0). The output depends on the input alone (fixed palette, fonts, rounding and
 * order), so the same results give the same bytes.
 *
 * @param title the headline, above everything
 * @param subtitle a second line, e.g. the machine and the commit; may be empty
 * @param unit the value axis' unit, e.g. "seconds (median)"
 * @param categories the groups along the category axis, at least one
 * @param series the coloured bars of every group, 1 to {@link #PALETTE}'s size, one value per category each
 * @param references dashed horizontal lines across the plot, none or more
 * @param width the picture's width in pixels
 * @param height the picture's height in pixels
 */
@Immutable
public record SvgBarChart(String title, String subtitle, String unit, List<String> categories, List<Series> series,
        List<ReferenceLine> references, int width, int height) {

    /** Series colours in order, distinct on a white background and for the common colour-vision deficiencies. */
    public static final List<String> PALETTE =
            List.of("#3b75af", "#ef8636", "#519e3e", "#c53a32", "#8d69b8", "#84584e", "#d57dbf", "#7f7f7f");

    /** Renders well in a GitHub README column (which scales wider pictures down). */
    public static final int DEFAULT_WIDTH = 900;

    public static final int DEFAULT_HEIGHT = 420;

    private static final String FONT = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";
    private static final int MARGIN = 16;
    private static final int PLOT_LEFT = 76;
    private static final int LINE = 14;
    private static final double GROUP_FILL = 0.8;
    /** Average glyph width of the sans-serif fonts above, as a share of the font size; good enough to wrap labels. */
    private static final double GLYPH_WIDTH = 0.58;

    /**
     * One coloured set of bars, one value per category.
     *
     * @param name the legend's label
     * @param values one per category; {@code NaN} where the value is missing
     */
    @Immutable
    public record Series(String name, List<Double> values) {

        public Series {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("A series needs a name for the legend, got '" + name + "'");
            }
            if (values == null || values.stream().anyMatch(Objects::isNull)) { // List.of(...).contains(null) would throw
                throw new IllegalArgumentException("Series '" + name + "' has no values or a null one (" + values
                        + "); use NaN for a missing value");
            }
            values = List.copyOf(values);
        }
    }

    /**
     * A dashed horizontal line at {@code value}, labelled at its right end.
     *
     * @param value where, in the unit of the value axis; finite and not negative
     * @param label e.g. "recovery bound 8 s"
     */
    @Immutable
    public record ReferenceLine(double value, String label) {

        public ReferenceLine {
            if (!Double.isFinite(value) || value < 0) {
                throw new IllegalArgumentException("A reference line needs a finite value of 0 or more, got " + value
                        + " for '" + label + "'");
            }
            if (label == null) {
                throw new IllegalArgumentException("A reference line at " + value + " needs a label, got null");
            }
        }
    }

    public SvgBarChart {
        if (title == null || title.isBlank()) {
            throw new IllegalArgumentException("A bar chart needs a title, got '" + title + "'");
        }
        if (subtitle == null || unit == null || categories == null || series == null || references == null) {
            throw new IllegalArgumentException("Bar chart '" + title + "': subtitle, unit, categories, series and "
                    + "references must not be null");
        }
        if (categories.isEmpty()) {
            throw new IllegalArgumentException("Bar chart '" + title + "' has no categories: nothing to draw");
        }
        if (series.isEmpty() || series.size() > PALETTE.size()) {
            throw new IllegalArgumentException("Bar chart '" + title + "' has " + series.size() + " series; it draws 1 to "
                    + PALETTE.size() + " (one palette colour each)");
        }
        for (Series s : series) {
            if (s.values().size() != categories.size()) {
                throw new IllegalArgumentException("Bar chart '" + title + "': series '" + s.name() + "' has "
                        + s.values().size() + " values for the " + categories.size() + " categories " + categories);
            }
            for (int i = 0; i < categories.size(); i++) {
                double v = s.values().get(i);
                if (Double.isInfinite(v) || v < 0) {
                    throw new IllegalArgumentException("Bar chart '" + title + "': series '" + s.name() + "' has " + v
                            + " for category '" + categories.get(i) + "'; bars start at 0, so a value is finite and "
                            + "0 or more (NaN when missing)");
                }
            }
        }
        if (width < 300 || height < 200) {
            throw new IllegalArgumentException("Bar chart '" + title + "' of " + width + " x " + height
                    + " pixels is too small to read; it needs at least 300 x 200");
        }
        categories = List.copyOf(categories);
        series = List.copyOf(series);
        references = List.copyOf(references);
    }

    /** A chart of the default size without reference lines. */
    public static SvgBarChart of(String title, String subtitle, String unit, List<String> categories, List<Series> series) {
        return new SvgBarChart(title, subtitle, unit, categories, series, List.of(), DEFAULT_WIDTH, DEFAULT_HEIGHT);
    }

    /** This chart with one more reference line. */
    public SvgBarChart withReference(double value, String label) {
        List<ReferenceLine> more = new ArrayList<>(references);
        more.add(new ReferenceLine(value, label));
        return new SvgBarChart(title, subtitle, unit, categories, series, more, width, height);
    }

    /** This chart at another height (the width stays). */
    public SvgBarChart withHeight(int newHeight) {
        return new SvgBarChart(title, subtitle, unit, categories, series, references, width, newHeight);
    }

    /** This chart alone as a standalone SVG document. */
    public String toSvg() {
        return document(List.of(this));
    }

    /** One SVG document holding {@code charts} one below the other, as wide as the widest. */
    public static String document(List<SvgBarChart> charts) {
        if (charts.isEmpty()) {
            throw new IllegalArgumentException("An SVG document needs at least one chart, got none");
        }
        int width = charts.stream().mapToInt(SvgBarChart::width).max().getAsInt();
        int height = charts.stream().mapToInt(SvgBarChart::height).sum();
        StringBuilder out = new StringBuilder();
        out.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"%s\">\n", width, height, width, height, FONT));
        out.append("<title>").append(escape(String.join("; ", charts.stream().map(SvgBarChart::title).toList())))
                .append("</title>\n");
        out.append(String.format(Locale.ROOT, "<rect class=\"background\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                width, height));
        int offset = 0;
        for (SvgBarChart chart : charts) {
            out.append(String.format(Locale.ROOT, "<g transform=\"translate(0,%d)\">\n", offset));
            chart.body(out);
            out.append("</g>\n");
            offset += chart.height();
        }
        return out.append("</svg>\n").toString();
    }

    /** The chart's elements, in its own coordinates (0,0 top left). */
    private void body(StringBuilder out) {
        text(out, MARGIN, 24, 16, "start", "#111111", "title", title, "font-weight=\"bold\"");
        if (!subtitle.isEmpty()) {
            text(out, MARGIN, 44, 12, "start", "#555555", "subtitle", subtitle, "");
        }
        double right = width - MARGIN;
        double legendBottom = legend(out, subtitle.isEmpty() ? 40 : 60, right);
        double groupWidth = (right - PLOT_LEFT) / categories.size();
        List<List<String>> labels = categories.stream().map(c -> wrap(c, groupWidth - 6, 12)).toList();
        int labelLines = labels.stream().mapToInt(List::size).max().getAsInt();
        double top = legendBottom + LINE + 6;
        double bottom = height - 10 - labelLines * LINE;
        if (bottom - top < 60) {
            throw new IllegalArgumentException("Bar chart '" + title + "' at " + width + " x " + height + " pixels leaves "
                    + Math.round(bottom - top) + " pixels for its bars after the legend and labels; make it taller");
        }
        double max = references.stream().mapToDouble(ReferenceLine::value).max().orElse(0);
        for (Series s : series) {
            for (double v : s.values()) {
                max = Double.isNaN(v) ? max : Math.max(max, v);
            }
        }
        ValueAxis axis = ValueAxis.covering(max);
        double scale = (bottom - top) / axis.top();
        for (double tick : axis.ticks()) {
            double y = bottom - tick * scale;
            out.append(String.format(Locale.ROOT, "<line class=\"grid\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                    + "stroke=\"#e3e3e3\"/>\n", n(PLOT_LEFT), n(y), n(right), n(y)));
            text(out, PLOT_LEFT - 6, y + 4, 11, "end", "#444444", "tick", axis.tickLabel(tick), "");
        }
        out.append(String.format(Locale.ROOT, "<text class=\"unit\" transform=\"translate(%s,%s) rotate(-90)\" "
                + "font-size=\"12\" text-anchor=\"middle\" fill=\"#444444\">%s</text>\n", n(MARGIN + 6),
                n((top + bottom) / 2), escape(unit)));
        for (int c = 0; c < categories.size(); c++) {
            bars(out, c, PLOT_LEFT + c * groupWidth, groupWidth, bottom, scale);
            for (int line = 0; line < labels.get(c).size(); line++) {
                text(out, PLOT_LEFT + (c + 0.5) * groupWidth, bottom + 16 + line * LINE, 12, "middle", "#222222",
                        "category", labels.get(c).get(line), "");
            }
        }
        out.append(String.format(Locale.ROOT, "<line class=\"baseline\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                + "stroke=\"#333333\"/>\n", n(PLOT_LEFT), n(bottom), n(right), n(bottom)));
        for (ReferenceLine r : references) {
            double y = bottom - r.value() * scale;
            out.append(String.format(Locale.ROOT, "<line class=\"reference\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                    + "stroke=\"#222222\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n", n(PLOT_LEFT), n(y), n(right),
                    n(y)));
            text(out, right - 2, y - 4, 11, "end", "#222222", "reference-label", r.label(), "");
        }
    }

    /** Draws the legend in rows from {@code y}; returns the y below it. */
    private double legend(StringBuilder out, double y, double right) {
        double x = PLOT_LEFT;
        for (int i = 0; i < series.size(); i++) {
            double itemWidth = 18 + textWidth(series.get(i).name(), 12) + 18;
            if (x > PLOT_LEFT && x + itemWidth > right) {
                x = PLOT_LEFT;
                y += 18;
            }
            out.append(String.format(Locale.ROOT, "<rect class=\"legend\" x=\"%s\" y=\"%s\" width=\"12\" height=\"12\" "
                    + "fill=\"%s\"/>\n", n(x), n(y), PALETTE.get(i)));
            text(out, x + 18, y + 10, 12, "start", "#222222", "legend-label", series.get(i).name(), "");
            x += itemWidth;
        }
        return y + 12;
    }

    /** The bars of category {@code c} in the group from {@code left}, each with its value label. */
    private void bars(StringBuilder out, int c, double left, double groupWidth, double bottom, double scale) {
        double barWidth = groupWidth * GROUP_FILL / series.size();
        double first = left + groupWidth * (1 - GROUP_FILL) / 2;
        int labelSize = barWidth >= 40 ? 11 : 10;
        for (int s = 0; s < series.size(); s++) {
            double value = series.get(s).values().get(c);
            double x = first + s * barWidth;
            double centre = x + barWidth / 2;
            if (Double.isNaN(value)) {
                text(out, centre, bottom - 4, labelSize, "middle", "#888888", "missing", "n/a", "");
                continue;
            }
            double h = value * scale;
            out.append(String.format(Locale.ROOT, "<rect class=\"bar\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" "
                    + "fill=\"%s\"/>\n", n(x + 1), n(bottom - h), n(Math.max(1, barWidth - 2)), n(h), PALETTE.get(s)));
            text(out, centre, bottom - h - 4, labelSize, "middle", "#222222", "value", ValueAxis.valueLabel(value), "");
        }
    }

    private static void text(StringBuilder out, double x, double y, int size, String anchor, String fill, String kind,
            String content, String extra) {
        out.append(String.format(Locale.ROOT, "<text class=\"%s\" x=\"%s\" y=\"%s\" font-size=\"%d\" text-anchor=\"%s\" "
                + "fill=\"%s\"%s>%s</text>\n", kind, n(x), n(y), size, anchor, fill, extra.isEmpty() ? "" : " " + extra,
                escape(content)));
    }

    /** {@code text} split at spaces into lines of at most {@code maxWidth} pixels (a longer word keeps its own line). */
    static List<String> wrap(String text, double maxWidth, int fontSize) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.trim().split("\\s+")) {
            String candidate = line.isEmpty() ? word : line + " " + word;
            if (!line.isEmpty() && textWidth(candidate, fontSize) > maxWidth) {
                lines.add(line.toString());
                line = new StringBuilder(word);
            } else {
                line = new StringBuilder(candidate);
            }
        }
        lines.add(line.toString());
        return lines;
    }

    private static double textWidth(String text, int fontSize) {
        return text.length() * fontSize * GLYPH_WIDTH;
    }

    /** A coordinate with one decimal at most, never "-0". */
    private static String n(double value) {
        double rounded = Math.round(value * 10) / 10.0;
        return rounded == Math.rint(rounded) ? Long.toString((long) rounded) : String.format(Locale.ROOT, "%.1f", rounded);
    }

    /** {@code text} safe inside an XML element or a double-quoted attribute. */
    static String escape(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&apos;");
                default -> out.append(c < 0x20 && c != '\t' && c != '\n' ? ' ' : c);
            }
        }
        return out.toString();
    }
}
