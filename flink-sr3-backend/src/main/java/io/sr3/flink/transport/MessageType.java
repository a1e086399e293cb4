package io.sr3.flink.transport;

/**
 * The kind of a {@link Frame}, one byte on the wire.
 *
 * <p>Each constant documents its payload layout (big-endian; {@code utf8} is the rest of the
 * payload as UTF-8 unless a length prefix is given).
 */
public enum MessageType {
    /** Server to client, first frame of every connection. Payload: {@code nonce[32]}. */
    CHALLENGE(1),
    /** Client to server. Payload: {@code HMAC-SHA256(secret, nonce)[32]}, or empty without a secret. */
    AUTH(2),
    /** Server to client: the handshake succeeded. Payload: empty. */
    AUTH_OK(3),

    /** Store a block. Payload: {@code keyLength u16 | key utf8 | data}. Answer: {@link #OK}. */
    PUT_BLOCK(10),
    /** Read a block. Payload: {@code key utf8}. Answer: {@link #DATA} with the block's bytes. */
    GET_BLOCK(11),
    /** Delete a block; deleting a missing block succeeds. Payload: {@code key utf8}. Answer: {@link #OK}. */
    DELETE_BLOCK(12),
    /**
     * List the keys that start with a prefix. Payload: {@code prefix utf8}. Answer: {@link #DATA}
     * holding {@code count i32 | (keyLength u16 | key utf8)*}.
     */
    LIST_KEYS(13),
    /**
     * Failure-detector probe that also carries membership. Payload: the sender's member record, or
     * empty from a client node (which must not become a member).
     * Answer: {@link #DATA} holding the responder's live members (see {@code MemberCodec}).
     */
    PING(14),
    /**
     * Ask a node for its counters (ring size, bytes stored, repair progress): for operators and
     * tests that watch a ring from outside. Payload: empty. Answer: {@link #DATA} holding
     * {@code count i32 | (nameLength u16 | name utf8 | value i64)*}.
     */
    STATS(15),

    /** Success without a body. */
    OK(100),
    /** Success with a body; the layout depends on the request. */
    DATA(101),
    /** Failure. Payload: {@code errorCode u8 | message utf8}, see {@link ErrorCode}. */
    ERROR(102);

    private static final MessageType[] BY_CODE = new MessageType[256];

    static {
        for (MessageType type : values()) {
            BY_CODE[type.code] = type;
        }
    }

    private final int code;

    MessageType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** Returns the type for a wire code, or null if the code is unknown. */
    public static MessageType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** Whether this type answers a request (as opposed to asking something). */
    public boolean isResponse() {
        return this == OK || this == DATA || this == ERROR;
    }
}
