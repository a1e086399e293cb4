package io.sr3.flink.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Names a benchmark's result files {@code <kind>-<date>-<commit>}, so a result says which code it
 * measured and a second run never overwrites the first: runs on one day and commit get
 * {@code -2}, {@code -3}, ... The commit is {@code git rev-parse --short HEAD} of the working
 * directory, with {@code -dirty} when tracked files differ from it, and {@code unknown-commit}
 * outside a git checkout.
 */
public final class ResultFiles {

    private static final long GIT_TIMEOUT_SECONDS = 10;

    private ResultFiles() {}

    /** The base name (no extension) for a new result of {@code kind}: no {@code .md} or {@code .json} of it exists yet. */
    public static String newBaseName(Path directory, String kind) {
        String base = kind + "-" + LocalDate.now(ZoneOffset.UTC) + "-" + commit();
        String name = base;
        for (int n = 2; Files.exists(directory.resolve(name + ".md")) || Files.exists(directory.resolve(name + ".json")); n++) {
            name = base + "-" + n;
        }
        return name;
    }

    /** The checked-out commit, {@code -dirty} when tracked files changed, or {@code unknown-commit}. */
    public static String commit() {
        String head = git("rev-parse", "--short", "HEAD");
        if (head == null || head.isEmpty()) {
            return "unknown-commit";
        }
        String changes = git("status", "--porcelain", "--untracked-files=no");
        return changes == null || changes.isEmpty() ? head : head + "-dirty";
    }

    private static String git(String... arguments) {
        List<String> command = new java.util.ArrayList<>(List.of("git"));
        command.addAll(List.of(arguments));
        try {
            Process git = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!git.waitFor(GIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                git.destroyForcibly();
                return null;
            }
            return git.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
