package io.sr3.flink.transport;

/** The peer answered a request with an {@link MessageType#ERROR} frame. */
public class RemoteException extends TransportException {

    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public RemoteException(String peer, ErrorCode code, String message) {
        super(peer, code + ": " + message);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }
}
