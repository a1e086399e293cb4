package io.sr3.flink.transport;

/** The shared-secret handshake failed: the two sides do not share sr3.transport.secret. */
public class AuthenticationException extends TransportException {

    private static final long serialVersionUID = 1L;

    public AuthenticationException(String peer, String message) {
        super(peer, message + " (check that every node has the same sr3.transport.secret and TLS settings)");
    }
}
