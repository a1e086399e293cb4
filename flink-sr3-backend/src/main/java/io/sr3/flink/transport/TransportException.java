package io.sr3.flink.transport;

import java.io.IOException;
import java.net.SocketAddress;

/** A failure talking to a ring peer; the message always names the peer. */
public class TransportException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String peer;

    public TransportException(String peer, String message) {
        super(describe(peer, message));
        this.peer = peer;
    }

    public TransportException(String peer, String message, Throwable cause) {
        super(describe(peer, message), cause);
        this.peer = peer;
    }

    public TransportException(SocketAddress peer, String message) {
        this(String.valueOf(peer), message);
    }

    /** The peer this failure concerns, as host:port or node id. */
    public String peer() {
        return peer;
    }

    private static String describe(String peer, String message) {
        return "[peer " + peer + "] " + message;
    }
}
