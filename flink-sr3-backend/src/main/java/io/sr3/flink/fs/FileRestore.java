package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.restore.BlockFetch;
import io.sr3.flink.restore.BlockSink;
import io.sr3.flink.restore.RestoreExecutor;
import io.sr3.flink.restore.RestoreReport;
import io.sr3.flink.store.SlicedFileWrites;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Restores whole files through one restore plan: all blocks of all files a subtask needs are
 * planned together, so holders are balanced across files, then written where Flink wants them.
 */
final class FileRestore {

    /** One file to restore: its manifest and how to name it. */
    record Source(Manifest manifest, String displayPath) {}

    private FileRestore() {}

    /** Every block of {@code sources}, in file order, and the file and offset each belongs to. */
    private record Layout(List<BlockFetch> fetches, int[] fileOf, long[] offsetOf) {
        static Layout of(List<Source> sources) {
            List<BlockFetch> fetches = new ArrayList<>();
            List<int[]> placement = new ArrayList<>();
            List<Long> offsets = new ArrayList<>();
            for (int f = 0; f < sources.size(); f++) {
                Manifest manifest = sources.get(f).manifest();
                long offset = 0;
                for (int b = 0; b < manifest.blocks().size(); b++) {
                    Manifest.BlockRef block = manifest.blocks().get(b);
                    fetches.add(new BlockFetch(block.key(), block.length(), block.crc32c(), block.holders(),
                            "block " + b + " of " + manifest.blocks().size() + " of " + sources.get(f).displayPath()));
                    placement.add(new int[] {f});
                    offsets.add(offset);
                    offset += block.length();
                }
            }
            int[] fileOf = placement.stream().mapToInt(p -> p[0]).toArray();
            long[] offsetOf = offsets.stream().mapToLong(Long::longValue).toArray();
            return new Layout(fetches, fileOf, offsetOf);
        }
    }

    /**
     * Writes each source to its destination on the local disk, creating parent directories.
     *
     * @param abortRegistrar receives a handle that aborts the restore by closing its files
     */
    static RestoreReport toLocalFiles(RingNode node, String description, List<Source> sources, List<Path> destinations,
            CloseableRegistrar abortRegistrar) throws IOException {
        Layout layout = Layout.of(sources);
        List<FileChannel> channels = new ArrayList<>(destinations.size());
        Closeable abort = () -> closeAll(channels);
        abortRegistrar.register(abort);
        try {
            for (Path destination : destinations) {
                if (destination.getParent() != null) {
                    Files.createDirectories(destination.getParent());
                }
                channels.add(FileChannel.open(destination, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING));
            }
            RestoreReport report = new RestoreExecutor(node, node.config().restore()).restore(description, layout.fetches(),
                    new FileSink(layout, channels));
            // No force(): like Flink's own state download, a restored file that a crash cuts short is
            // downloaded again by the restore after it; the ring still holds every replica.
            return report;
        } finally {
            closeAll(channels);
            abortRegistrar.unregister(abort);
        }
    }

    /** Writes each block at its offset in its file, straight from the buffer it was read into, in {@link SlicedFileWrites slices}. */
    private record FileSink(Layout layout, List<FileChannel> channels) implements BlockSink {

        @Override
        public void accept(int index, byte[] data) throws IOException {
            accept(index, ByteBuffer.wrap(data));
        }

        @Override
        public void accept(int index, ByteBuffer data) throws IOException {
            SlicedFileWrites.write(channels.get(layout.fileOf()[index]), data, layout.offsetOf()[index]);
        }
    }

    /** Brings every block of {@code sources} into {@code cache}, where the file's input streams find them. */
    static RestoreReport toMemory(RingNode node, String description, List<Source> sources, PrefetchedBlocks cache)
            throws IOException {
        Layout layout = Layout.of(sources);
        return new RestoreExecutor(node, node.config().restore()).restore(description, layout.fetches(),
                (index, data) -> cache.put(layout.fetches().get(index).key(), data));
    }

    private static void closeAll(List<FileChannel> channels) throws IOException {
        IOException first = null;
        for (FileChannel channel : channels) {
            try {
                channel.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Flink's closeable registry, seen from here: cancelling the task closes what is registered. */
    interface CloseableRegistrar {
        void register(Closeable closeable) throws IOException;

        void unregister(Closeable closeable);
    }
}
