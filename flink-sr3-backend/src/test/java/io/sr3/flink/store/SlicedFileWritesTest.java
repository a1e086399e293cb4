package io.sr3.flink.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Block-sized buffers reach files in slices the kernel backs with small page-cache folios, byte for byte. */
class SlicedFileWritesTest {

    @TempDir Path directory;

    @Test
    void aBlockIsWrittenInSlicesAtTheChannelsPosition() throws IOException {
        byte[] block = randomBytes(4 * 1024 * 1024 + 17);
        ByteBuffer data = ByteBuffer.allocateDirect(block.length + 100);
        data.position(100).mark();
        data.put(block).reset();
        Path file = directory.resolve("block");
        try (RecordingChannel channel = new RecordingChannel(file)) {
            channel.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            SlicedFileWrites.write(channel, data);
            assertThat(channel.largestWrite()).isLessThanOrEqualTo(SlicedFileWrites.SLICE_BYTES);
            assertThat(channel.writes()).isEqualTo(1 + 65);
        }
        assertThat(data.position()).as("the caller's buffer is left as it was").isEqualTo(100);
        byte[] written = Files.readAllBytes(file);
        assertThat(Arrays.copyOfRange(written, 0, 3)).containsExactly(1, 2, 3);
        assertThat(Arrays.copyOfRange(written, 3, written.length)).isEqualTo(block);
    }

    @Test
    void aBlockIsWrittenInSlicesAtItsOffsetInTheFile() throws IOException {
        byte[] first = randomBytes(3 * SlicedFileWrites.SLICE_BYTES + 5);
        byte[] second = randomBytes(2 * 1024 * 1024);
        Path file = directory.resolve("restored");
        try (RecordingChannel channel = new RecordingChannel(file)) {
            // Out of order, as restored blocks may arrive.
            SlicedFileWrites.write(channel, ByteBuffer.wrap(second), first.length);
            SlicedFileWrites.write(channel, ByteBuffer.wrap(first), 0);
            assertThat(channel.largestWrite()).isLessThanOrEqualTo(SlicedFileWrites.SLICE_BYTES);
        }
        byte[] written = Files.readAllBytes(file);
        assertThat(Arrays.copyOfRange(written, 0, first.length)).isEqualTo(first);
        assertThat(Arrays.copyOfRange(written, first.length, written.length)).isEqualTo(second);
    }

    private static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        return bytes;
    }

    /** A real file channel that records the size of each write it is asked for. */
    private static final class RecordingChannel extends FileChannel {
        private final FileChannel file;
        private final List<Integer> writeSizes = new ArrayList<>();

        RecordingChannel(Path path) throws IOException {
            this.file = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        }

        int largestWrite() {
            return writeSizes.stream().mapToInt(Integer::intValue).max().orElse(0);
        }

        int writes() {
            return writeSizes.size();
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            writeSizes.add(src.remaining());
            return file.write(src);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            writeSizes.add(src.remaining());
            return file.write(src, position);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            writeSizes.add(Arrays.stream(srcs, offset, offset + length).mapToInt(ByteBuffer::remaining).sum());
            return file.write(srcs, offset, length);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return file.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return file.read(dsts, offset, length);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return file.read(dst, position);
        }

        @Override
        public long position() throws IOException {
            return file.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            file.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return file.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            file.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            file.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return file.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            return file.transferFrom(src, position, count);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return file.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return file.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return file.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            file.close();
        }
    }
}
