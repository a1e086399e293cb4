package io.sr3.flink.tools;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code sr3 cp}: copies a file or directory tree between Flink file systems; a checkpoint
 * directory on the ring is copied with every file its {@code _metadata} names outside it, each at
 * the same place relative to the copy as to the original.
 */
@NotThreadSafe
final class Copy {

    private static final int BUFFER = 1 << 20;

    private final PrintStream out;

    Copy(AdminConnection connection, PrintStream out) {
        Objects.requireNonNull(connection, "connection"); // the ring must be joined before any sr3:// read
        this.out = out;
    }

    /** Copies {@code source} to {@code target}; returns the exit code. */
    int copy(Path source, Path target, boolean overwrite) throws IOException {
        FileSystem from = source.getFileSystem();
        FileSystem to = target.getFileSystem();
        FileStatus status = from.getFileStatus(source);
        Map<Path, Path> plan = new LinkedHashMap<>();
        List<Path> directories = new ArrayList<>();
        if (status.isDir()) {
            directories.add(target);
            walk(from, CheckpointFiles.normalized(source), target, plan, directories);
        } else {
            plan.put(CheckpointFiles.normalized(source), target);
        }
        Path metadata = "sr3".equals(source.toUri().getScheme()) && status.isDir()
                ? CheckpointFiles.metadataOf(from, source) : null;
        Path root = null;
        Path targetRoot = null;
        if (metadata != null) {
            CheckpointFiles checkpoint = CheckpointFiles.read(from, metadata);
            for (String type : checkpoint.unwalked()) {
                out.println("WARNING: a state handle of type " + type + " is not walked; files it names are not copied");
            }
            List<Path> outside = new ArrayList<>();
            for (Path file : checkpoint.files().keySet()) {
                if (!plan.containsKey(file)) {
                    outside.add(file);
                }
            }
            source = CheckpointFiles.normalized(source);
            root = commonAncestor(source, outside);
            int up = segments(source).length - segments(root).length;
            targetRoot = ancestor(target, up);
            for (Path file : outside) {
                plan.put(file, new Path(targetRoot, relative(root, file)));
            }
        }
        for (Map.Entry<Path, Path> step : plan.entrySet()) {
            if (!overwrite && to.exists(step.getValue())) {
                throw new IOException(step.getValue() + " exists; nothing was copied (--overwrite replaces files)");
            }
        }
        for (Path directory : directories) {
            to.mkdirs(directory);
        }
        long bytes = 0;
        for (Map.Entry<Path, Path> step : plan.entrySet()) {
            long copied = copyFile(from, step.getKey(), to, step.getValue(), overwrite);
            out.printf("%s -> %s (%d bytes)%n", step.getKey(), step.getValue(), copied);
            bytes += copied;
        }
        out.printf("Copied %d file(s), %d bytes%n", plan.size(), bytes);
        if (root != null && !root.equals(source)) {
            out.printf("The checkpoint's files outside %s went to the same places under %s as under %s. To put it "
                    + "back where its _metadata expects it: sr3 cp %s %s%n", source, targetRoot, root, targetRoot, root);
        }
        return Sr3Admin.OK;
    }

    private static void walk(FileSystem fs, Path directory, Path target, Map<Path, Path> plan, List<Path> directories)
            throws IOException {
        for (FileStatus child : Listing.sorted(fs.listStatus(directory))) {
            Path destination = new Path(target, child.getPath().getName());
            if (child.isDir()) {
                directories.add(destination);
                walk(fs, child.getPath(), destination, plan, directories);
            } else {
                plan.put(CheckpointFiles.normalized(child.getPath()), destination);
            }
        }
    }

    /** Copies one file, every byte verified by the source's reads; returns the bytes copied. */
    private static long copyFile(FileSystem from, Path source, FileSystem to, Path target, boolean overwrite)
            throws IOException {
        long expected = from.getFileStatus(source).getLen();
        long copied = 0;
        byte[] buffer = new byte[BUFFER];
        try (FSDataInputStream in = from.open(source);
                FSDataOutputStream outStream = to.create(target,
                        overwrite ? FileSystem.WriteMode.OVERWRITE : FileSystem.WriteMode.NO_OVERWRITE)) {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                outStream.write(buffer, 0, n);
                copied += n;
            }
        }
        if (copied != expected) {
            throw new IOException("Copied " + copied + " bytes of " + source + ", which holds " + expected);
        }
        return copied;
    }

    /** The deepest directory holding {@code source} and every file of {@code others} (all of one file system). */
    static Path commonAncestor(Path source, List<Path> others) {
        String[] common = segments(source);
        int depth = common.length;
        for (Path other : others) {
            if (!Objects.equals(authority(other), authority(source)) || !Objects.equals(scheme(other), scheme(source))) {
                throw new IllegalArgumentException("The checkpoint names " + other + ", on another file system than "
                        + source + "; copy it separately");
            }
            String[] segments = segments(other.getParent());
            int shared = 0;
            while (shared < Math.min(depth, segments.length) && common[shared].equals(segments[shared])) {
                shared++;
            }
            depth = shared;
        }
        return pathOf(source, Arrays.copyOf(common, depth));
    }

    /** {@code path} without its last {@code levels} segments. */
    static Path ancestor(Path path, int levels) {
        String[] segments = segments(path);
        if (levels > segments.length - 1) {
            throw new IllegalArgumentException("The checkpoint names files " + levels + " directories above it; the "
                    + "target " + path + " must be at least that deep to hold them at the same places");
        }
        return pathOf(path, Arrays.copyOf(segments, segments.length - levels));
    }

    /** The path of {@code file} below {@code root}. */
    static String relative(Path root, Path file) {
        String[] rootSegments = segments(root);
        String[] fileSegments = segments(file);
        return String.join("/", Arrays.copyOfRange(fileSegments, rootSegments.length, fileSegments.length));
    }

    private static String[] segments(Path path) {
        String p = path.toUri().getPath();
        return Arrays.stream(p == null ? new String[0] : p.split("/")).filter(s -> !s.isEmpty()).toArray(String[]::new);
    }

    private static Path pathOf(Path like, String[] segments) {
        URI uri = like.toUri();
        String path = "/" + String.join("/", segments);
        try {
            return new Path(new URI(uri.getScheme(), uri.getAuthority(), path, null, null));
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("Cannot form a path " + path + " on " + like, e);
        }
    }

    private static String scheme(Path path) {
        return path.toUri().getScheme();
    }

    private static String authority(Path path) {
        String authority = path.toUri().getAuthority();
        return authority == null ? "" : authority;
    }
}
