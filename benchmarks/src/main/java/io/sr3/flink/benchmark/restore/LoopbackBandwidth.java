package io.sr3.flink.benchmark.restore;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What one plain TCP stream moves over 127.0.0.1 on this machine: the ceiling that restores over
 * loopback are compared with. No framing, no checksums, no copies beyond the kernel's.
 */
public final class LoopbackBandwidth {

    private static final int CHUNK = 1 << 20;

    private LoopbackBandwidth() {}

    /** Streams {@code warmUpBytes}, then {@code bytes}, on one connection; returns bytes per second of the second. */
    public static double measure(long warmUpBytes, long bytes) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            CompletableFuture<Void> received = CompletableFuture.runAsync(() -> receive(server, warmUpBytes + bytes));
            try (SocketChannel sender = SocketChannel.open(server.getLocalAddress())) {
                ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK);
                send(sender, chunk, warmUpBytes);
                long start = System.nanoTime();
                send(sender, chunk, bytes);
                await(received);
                return bytes / ((System.nanoTime() - start) / 1e9);
            }
        }
    }

    private static void send(SocketChannel channel, ByteBuffer chunk, long bytes) throws IOException {
        for (long sent = 0; sent < bytes; ) {
            chunk.clear().limit((int) Math.min(CHUNK, bytes - sent));
            while (chunk.hasRemaining()) {
                sent += channel.write(chunk);
            }
        }
    }

    private static void receive(ServerSocketChannel server, long bytes) {
        try (SocketChannel channel = server.accept()) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
            for (long read = 0; read < bytes; ) {
                buffer.clear();
                int n = channel.read(buffer);
                if (n < 0) {
                    throw new IOException("loopback stream closed after " + read + " of " + bytes + " bytes");
                }
                read += n;
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The receiver reads until the last byte; a stuck stream fails after a minute instead of hanging the benchmark. */
    private static void await(CompletableFuture<Void> received) throws IOException {
        try {
            received.get(1, TimeUnit.MINUTES);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("loopback bandwidth measurement failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while measuring loopback bandwidth", e);
        }
    }
}
