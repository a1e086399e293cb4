package io.sr3.flink.transport;

/** The connection to a peer could not be opened or was closed while a request was pending. */
public class PeerUnavailableException extends TransportException {

    private static final long serialVersionUID = 1L;

    public PeerUnavailableException(String peer, String message, Throwable cause) {
        super(peer, message, cause);
    }

    public PeerUnavailableException(String peer, String message) {
        super(peer, message);
    }
}
