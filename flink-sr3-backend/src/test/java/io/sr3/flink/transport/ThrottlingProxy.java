package io.sr3.flink.transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on loopback that forwards what clients send to {@code target} at a limited rate per
 * connection (answers flow back unthrottled): a slow link, in one JVM, with real sockets.
 */
final class ThrottlingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final long bytesPerSecond;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile int accepted;

    ThrottlingProxy(InetSocketAddress target, long bytesPerSecond) throws IOException {
        this.target = target;
        this.bytesPerSecond = bytesPerSecond;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "throttling-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    /** Connections accepted so far. */
    int accepted() {
        return accepted;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(target.getAddress(), target.getPort());
                sockets.add(client);
                sockets.add(upstream);
                accepted++;
                pump(client, upstream, bytesPerSecond);
                pump(upstream, client, 0);
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Copies {@code from} to {@code to}, at most {@code rate} bytes per second (0: as fast as it comes). */
    private static void pump(Socket from, Socket to, long rate) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            long started = System.nanoTime();
            long sent = 0;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                    sent += n;
                    if (rate > 0) {
                        long due = started + sent * 1_000_000_000L / rate;
                        LockSupport.parkNanos(due - System.nanoTime());
                    }
                }
            } catch (IOException e) {
                // a side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "throttling-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        sockets.forEach(ThrottlingProxy::closeQuietly);
    }
}
