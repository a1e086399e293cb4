package io.sr3.flink.cluster;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * One TCP stream between two processes, for {@link NamespaceNetworkTest}: {@code serve <host>
 * <port>} accepts one connection, reads to its end and prints {@code <bytes> <nanos>} from the
 * first to the last byte; {@code send <host> <port> <bytes>} connects and writes that many bytes.
 */
public final class TcpTransfer {

    private TcpTransfer() {}

    public static void main(String[] args) throws Exception {
        InetAddress host = InetAddress.getByName(args[1]);
        int port = Integer.parseInt(args[2]);
        byte[] buffer = new byte[256 * 1024];
        if (args[0].equals("serve")) {
            try (ServerSocket server = new ServerSocket()) {
                server.bind(new InetSocketAddress(host, port));
                System.out.println("listening");
                System.out.flush();
                try (Socket socket = server.accept(); InputStream in = socket.getInputStream()) {
                    long bytes = 0;
                    long first = 0;
                    int n;
                    while ((n = in.read(buffer)) >= 0) {
                        if (bytes == 0) {
                            first = System.nanoTime();
                        }
                        bytes += n;
                    }
                    System.out.println(bytes + " " + (System.nanoTime() - first));
                }
            }
        } else {
            long remaining = Long.parseLong(args[3]);
            try (Socket socket = new Socket(host, port); OutputStream out = socket.getOutputStream()) {
                while (remaining > 0) {
                    int n = (int) Math.min(buffer.length, remaining);
                    out.write(buffer, 0, n);
                    remaining -= n;
                }
            }
        }
    }
}
