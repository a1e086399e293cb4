package io.sr3.flink.transport;

/** A frame broke the wire format; the connection it came on is closed. */
public class CorruptFrameException extends TransportException {

    private static final long serialVersionUID = 1L;

    public CorruptFrameException(String peer, String message) {
        super(peer, message);
    }
}
