package io.sr3.flink.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Writes buffers to files in slices of at most {@link #SLICE_BYTES} per system call.
 *
 * <p>Why: the kernel sizes the page-cache folios of a buffered write after the write, so one
 * 4 MiB {@code write} gets large folios, which a virtual machine that hands free memory back to
 * its host fills ten times slower than small ones (measured in docs/benchmarks.md, "Process
 * recovery"). Flink's stream copies write a few KiB at a time and never meet that cost.
 */
public final class SlicedFileWrites {

    /** Large enough that system calls cost nothing measurable, small enough for the kernel's small folios. */
    public static final int SLICE_BYTES = 64 * 1024;

    private SlicedFileWrites() {}

    /** Writes {@code data}'s remaining bytes at the channel's position; {@code data}'s position is left unchanged. */
    public static void write(FileChannel channel, ByteBuffer data) throws IOException {
        ByteBuffer slice = data.duplicate();
        int end = slice.limit();
        while (slice.position() < end) {
            slice.limit(Math.min(end, slice.position() + SLICE_BYTES));
            while (slice.hasRemaining()) {
                channel.write(slice);
            }
        }
    }

    /** Writes {@code data}'s remaining bytes at {@code position} in the file; {@code data}'s position is left unchanged. */
    public static void write(FileChannel channel, ByteBuffer data, long position) throws IOException {
        ByteBuffer slice = data.duplicate();
        int end = slice.limit();
        long at = position;
        while (slice.position() < end) {
            slice.limit(Math.min(end, slice.position() + SLICE_BYTES));
            while (slice.hasRemaining()) {
                at += channel.write(slice, at);
            }
        }
    }
}
