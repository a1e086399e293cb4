package io.sr3.flink.harness;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Writes the SVG plots of benchmark results: {@code <name>.svg} next to each recognised
 * {@code <name>.json} (see {@link ResultCharts} for the shapes). The benchmarks' report writers
 * call {@link #writeAndEmbed} when they write their results; {@code mvn -pl benchmarks exec:exec@plots}
 * runs {@link #main} over {@code benchmarks/results} to redraw every plot from the JSON alone.
 * A JSON it does not recognise, or cannot read, is skipped with one line naming the file.
 */
public final class ResultPlots {

    private ResultPlots() {}

    /** {@code ResultPlots <results directory>}: one SVG per recognised JSON in it; exit code 2 when it cannot write. */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("Usage: ResultPlots <results directory>");
            System.exit(2);
        }
        try {
            Path directory = Path.of(args[0]);
            List<Path> written = writeAll(directory, System.err);
            System.out.println("[plots] wrote " + written.size() + " SVG files in " + directory);
        } catch (IOException e) {
            System.err.println("[plots] failed: " + e);
            System.exit(2);
        }
    }

    /** Writes the SVG of every recognised {@code *.json} directly in {@code directory}, in name order; returns them. */
    static List<Path> writeAll(Path directory, PrintStream skipped) throws IOException {
        if (!Files.isDirectory(directory)) {
            throw new IOException("Results directory " + directory.toAbsolutePath() + " does not exist or is no directory");
        }
        List<Path> jsonFiles;
        try (Stream<Path> files = Files.list(directory)) {
            jsonFiles = files.filter(f -> f.getFileName().toString().endsWith(".json")).sorted().toList();
        }
        List<Path> written = new ArrayList<>();
        for (Path json : jsonFiles) {
            write(json, skipped).ifPresent(written::add);
        }
        return written;
    }

    /**
     * Writes {@code <name>.svg} next to {@code jsonFile} when its shape is recognised.
     *
     * @param skipped where the one line goes when the file is skipped (unreadable, unknown shape, nothing to draw)
     * @return the SVG file, or empty when skipped
     * @throws IOException when the SVG cannot be written
     */
    public static Optional<Path> write(Path jsonFile, PrintStream skipped) throws IOException {
        String name = baseName(jsonFile);
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(jsonFile, StandardCharsets.UTF_8));
        } catch (IOException e) {
            skipped.println("[plots] skipped " + jsonFile + ": not readable as JSON (" + String.valueOf(e.getMessage()).lines()
                    .findFirst().orElse("") + ")");
            return Optional.empty();
        }
        Optional<List<SvgBarChart>> charts;
        try {
            charts = ResultCharts.of(name, root);
        } catch (IllegalArgumentException e) {
            skipped.println("[plots] skipped " + jsonFile + ": a known shape with nothing to draw (" + e.getMessage() + ")");
            return Optional.empty();
        }
        if (charts.isEmpty()) {
            skipped.println("[plots] skipped " + jsonFile + ": not a result shape that ResultPlots knows");
            return Optional.empty();
        }
        Path svg = jsonFile.resolveSibling(name + ".svg");
        Files.writeString(svg, SvgBarChart.document(charts.get()), StandardCharsets.UTF_8);
        return Optional.of(svg);
    }

    /**
     * For a report writer that has just written {@code jsonFile}: writes its SVG and returns the
     * Markdown that embeds it ({@code ![alt](<name>.svg)} and a blank line), or "" when skipped.
     */
    public static String writeAndEmbed(Path jsonFile, String alt) throws IOException {
        return write(jsonFile, System.err).map(svg -> "![" + alt + "](" + svg.getFileName() + ")\n\n").orElse("");
    }

    private static String baseName(Path jsonFile) {
        String file = jsonFile.getFileName().toString();
        return file.endsWith(".json") ? file.substring(0, file.length() - ".json".length()) : file;
    }
}
