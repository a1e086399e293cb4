package io.sr3.flink.transport;

/** Why a peer refused or failed a request; the first byte of an {@link MessageType#ERROR} payload. */
public enum ErrorCode {
    /** The requested block or key does not exist on that peer. */
    NOT_FOUND(1),
    /** The peer holds the block but its checksum does not match: it must not be used. */
    CORRUPT(2),
    /** The peer could not store the block (disk full, I/O error, over its size limit). */
    STORE_FAILED(3),
    /** The request was malformed. */
    BAD_REQUEST(4),
    /** The connection has not completed the shared-secret handshake. */
    UNAUTHENTICATED(5),
    /** Any other failure on the peer; the message says what. */
    INTERNAL(6),
    /** A relay could not reach the next hop of its route; the message names the hop. */
    UPSTREAM_FAILED(7),
    /** The peer's request queue is full; the request was not run. Try another replica or later. */
    BUSY(8);

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static ErrorCode fromCode(int code) {
        for (ErrorCode value : values()) {
            if (value.code == code) {
                return value;
            }
        }
        return INTERNAL;
    }
}
