package io.sr3.flink.tools;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;

/** {@code sr3 ls} and {@code sr3 du}, through Flink's {@link FileSystem} API (so on any scheme). */
@NotThreadSafe
final class Listing {

    private final PrintStream out;

    Listing(PrintStream out) {
        this.out = out;
    }

    /** Lists the entries of a directory (or the file itself); returns the exit code. */
    int list(Path path, boolean recursive) throws IOException {
        FileSystem fs = path.getFileSystem();
        FileStatus status = fs.getFileStatus(path);
        if (!status.isDir()) {
            print(status);
            return Sr3Admin.OK;
        }
        listChildren(fs, path, recursive);
        return Sr3Admin.OK;
    }

    private void listChildren(FileSystem fs, Path directory, boolean recursive) throws IOException {
        for (FileStatus child : sorted(fs.listStatus(directory))) {
            print(child);
            if (recursive && child.isDir()) {
                listChildren(fs, child.getPath(), true);
            }
        }
    }

    private void print(FileStatus status) {
        out.printf("%s %14d %2s %s %s%n", status.isDir() ? "d" : "-", status.getLen(),
                status.isDir() ? "-" : String.valueOf(status.getReplication()),
                Instant.ofEpochMilli(status.getModificationTime()), status.getPath());
    }

    /** Bytes and files under each entry of a directory, then the total; returns the exit code. */
    int usage(Path path, boolean summaryOnly) throws IOException {
        FileSystem fs = path.getFileSystem();
        FileStatus status = fs.getFileStatus(path);
        long[] total = {0, 0};
        if (!status.isDir()) {
            total = new long[] {status.getLen(), 1};
        } else {
            for (FileStatus child : sorted(fs.listStatus(path))) {
                long[] sizes = child.isDir() ? sizes(fs, child.getPath()) : new long[] {child.getLen(), 1};
                if (!summaryOnly) {
                    out.printf("%14d %8d  %s%n", sizes[0], sizes[1], child.getPath());
                }
                total[0] += sizes[0];
                total[1] += sizes[1];
            }
        }
        out.printf("%14d %8d  %s (total: bytes, files)%n", total[0], total[1], status.getPath());
        return Sr3Admin.OK;
    }

    /** {bytes, files} under a directory. */
    private static long[] sizes(FileSystem fs, Path directory) throws IOException {
        long[] sizes = {0, 0};
        for (FileStatus child : fs.listStatus(directory)) {
            long[] inner = child.isDir() ? sizes(fs, child.getPath()) : new long[] {child.getLen(), 1};
            sizes[0] += inner[0];
            sizes[1] += inner[1];
        }
        return sizes;
    }

    static FileStatus[] sorted(FileStatus[] statuses) {
        FileStatus[] copy = statuses == null ? new FileStatus[0] : statuses.clone();
        Arrays.sort(copy, Comparator.comparing(s -> s.getPath().toString()));
        return copy;
    }
}
