package io.sr3.flink;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the README, docs/ and the benchmark results index points at a file that
 * exists: result files are replaced by each run, and a README that links the previous run's plot
 * shows users a broken image.
 */
class DocsLinksTest {

    /** {@code [text](target)} or {@code ![alt](target)}; the target up to a space, ')' or '#'. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]+)(#[^)]*)?\\)");

    @Test
    void everyRelativeLinkPointsAtAFileThatExists() throws IOException {
        Path root = Path.of("..");
        List<Path> documents = new ArrayList<>(List.of(root.resolve("README.md"),
                root.resolve("benchmarks/results/README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(documents::add);
        }
        List<String> broken = new ArrayList<>();
        for (Path document : documents) {
            Matcher links = LINK.matcher(Files.readString(document));
            while (links.find()) {
                String target = links.group(1);
                if (target.contains("://") || target.startsWith("mailto:")) {
                    continue;
                }
                if (!Files.exists(document.getParent().resolve(target))) {
                    broken.add(root.relativize(document) + " -> " + target);
                }
            }
        }
        assertThat(documents).hasSizeGreaterThan(5);
        assertThat(broken).as("links to files that do not exist").isEmpty();
    }
}
