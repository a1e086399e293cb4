package io.sr3.flink.transport;

import java.time.Duration;

/** A request got no answer before its deadline: the peer is slow, overloaded or gone. */
public class RequestTimeoutException extends TransportException {

    private static final long serialVersionUID = 1L;

    public RequestTimeoutException(String peer, MessageType type, Duration deadline) {
        super(
                peer,
                type
                        + " got no answer within "
                        + deadline.toMillis()
                        + " ms; the peer may be down or overloaded");
    }
}
