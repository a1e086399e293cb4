package io.sr3.flink.testjob;

import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Delivers every {@link KeyResult} to a file in a directory shared by all processes of a cluster
 * on one host: the cross-process counterpart of {@link RegistrySink}.
 *
 * <p>Each writer (one per subtask attempt) appends to its own file, one line per result, written
 * with a single unbuffered {@code write} call. Like {@link RegistrySink} it is not transactional on
 * purpose: a result emitted twice appears twice, which {@link #read} reports, so a test can assert
 * "exactly one result per key".
 */
public final class FileResultSink extends VersionedSink<KeyResult> {

    private static final long serialVersionUID = 1L;
    private static final String PREFIX = "results-";

    private final String directory;

    public FileResultSink(Path directory) {
        this.directory = directory.toAbsolutePath().toString();
    }

    @Override
    public SinkWriter<KeyResult> createWriter(WriterInitContext context) throws IOException {
        Path dir = Files.createDirectories(Paths.get(directory));
        Path file = dir.resolve(PREFIX + context.getTaskInfo().getIndexOfThisSubtask() + "-"
                + context.getTaskInfo().getAttemptNumber() + "-" + UUID.randomUUID() + ".txt");
        OutputStream out = new FileOutputStream(file.toFile(), true);
        return new SinkWriter<>() {
            @Override
            public void write(KeyResult result, Context ctx) throws IOException {
                String line = result.key() + "," + result.count() + "," + result.sum() + "," + result.payloadChecksum() + "\n";
                out.write(line.getBytes(StandardCharsets.UTF_8));
            }

            @Override
            public void flush(boolean endOfInput) throws IOException {
                out.flush();
            }

            @Override
            public void close() throws IOException {
                out.close();
            }
        };
    }

    /** Every result found in {@code directory}, by key, duplicates included; a torn last line is an error. */
    public static Map<Integer, List<KeyResult>> read(Path directory) {
        Map<Integer, List<KeyResult>> results = new TreeMap<>();
        if (!Files.isDirectory(directory)) {
            return results;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, PREFIX + "*")) {
            for (Path file : files) {
                String text = Files.readString(file, StandardCharsets.UTF_8);
                if (!text.isEmpty() && !text.endsWith("\n")) {
                    throw new IllegalStateException("Torn result line in " + file + ": " + text);
                }
                for (String line : text.split("\n")) {
                    if (line.isEmpty()) {
                        continue;
                    }
                    String[] f = line.split(",");
                    KeyResult result = new KeyResult(Integer.parseInt(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]),
                            Long.parseLong(f[3]));
                    results.computeIfAbsent(result.key(), k -> new ArrayList<>()).add(result);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return results;
    }
}
