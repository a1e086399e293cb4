package io.sr3.flink.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for processes that start seconds after the port is chosen, picked below Linux's ephemeral
 * range (32768-60999): in the meantime an outgoing connection (the ring's failure detector dials
 * dead addresses many times a second) may be given any free ephemeral port, one picked by
 * {@code new ServerSocket(0)} included.
 */
final class FreePorts {

    private static final String LOCALHOST = "127.0.0.1";
    private static final int LOWEST = 20_000;
    private static final int RANGE = 12_000;
    private static final int ATTEMPTS = 100;

    private FreePorts() {}

    /** A port free now on 127.0.0.1; an ephemeral one if none of the range was free in 100 attempts. */
    static int freePort() {
        int port = randomFreePort(List.of(LOCALHOST));
        if (port > 0) {
            return port;
        }
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOCALHOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A port that is free now on every one of {@code hosts} (local addresses such as 127.0.0.2:
     * all of 127/8 is loopback on Linux), for nodes that listen on the same port at several
     * addresses; picked from the same range as {@link #freePort()}.
     *
     * @throws IllegalStateException if 100 candidates were all taken on one of the hosts
     */
    static int freePort(List<String> hosts) {
        int port = randomFreePort(hosts);
        if (port == 0) {
            throw new IllegalStateException("No port between " + LOWEST + " and " + (LOWEST + RANGE - 1)
                    + " was free on all of " + hosts + " in " + ATTEMPTS + " attempts");
        }
        return port;
    }

    /** A random port of the range free on every one of {@code hosts}, or 0 after 100 taken ones. */
    private static int randomFreePort(List<String> hosts) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int candidate = LOWEST + random.nextInt(RANGE);
            List<ServerSocket> bound = new ArrayList<>();
            try {
                for (String host : hosts) {
                    bound.add(new ServerSocket(candidate, 1, InetAddress.getByName(host)));
                }
                return candidate;
            } catch (IOException taken) {
                // try another
            } finally {
                for (ServerSocket socket : bound) {
                    try {
                        socket.close();
                    } catch (IOException ignored) {
                        // closing a listening socket that accepted nothing
                    }
                }
            }
        }
        return 0;
    }
}
