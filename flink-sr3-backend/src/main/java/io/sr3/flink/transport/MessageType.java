package io.sr3.flink.transport;

/**
 * The kind of a {@link Frame}, one byte on the wire.
 *
 * <p>Each constant documents its payload layout (big-endian; {@code utf8} is the rest of the
 * payload as UTF-8 unless a length prefix is given).
 */
public enum MessageType {
    /** Server to client, first frame of every connection. Payload: {@code serverNonce[32]}. */
    CHALLENGE(1),
    /** Client to server. Payload: {@code clientNonce[32] | clientProof[32]} (see {@code SharedSecret}). */
    AUTH(2),
    /** Server to client: the handshake succeeded. Payload: {@code serverProof[32]}. */
    AUTH_OK(3),

    /**
     * Store a block. Payload: {@code keyLength u16 | key utf8 | data}. Answer: {@link #OK} with
     * {@code storeNanos i64}, how long the store write took, so the sender can tell the link's
     * time from the disk's (within protocol version 2; an empty answer from an earlier build means
     * unknown).
     */
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
    /**
     * Fetch a block through a route of peers, for line and tree restores. Payload: {@code crc32c
     * i32 | length i32 | keyLength u16 | key utf8 | hopCount u8 | (idLength u16 | id utf8)*}. A node
     * with no hops left serves the block from its own store; otherwise it sends the request on to
     * the first hop with the rest of the route. Every node verifies length and CRC32C before it
     * answers, so a corrupt block is never forwarded. Answer: {@link #DATA} with the block's bytes,
     * {@link ErrorCode#CORRUPT}, or {@link ErrorCode#UPSTREAM_FAILED} when a hop could not be reached.
     */
    RELAY_BLOCK(16),
    /**
     * Replace a value only if it is the one the sender expects (see {@code
     * BlockStore#compareAndPut}): exclusive creates and the undo of a failed one. Payload: {@code
     * keyLength u16 | key utf8 | expectedLength i32 (-1: absent) | expected | replacementLength i32
     * (-1: delete) | replacement}. Answer: {@link #DATA} holding {@code swapped u8 | foundLength i32
     * (-1: absent) | found}.
     */
    COMPARE_AND_PUT(17),
    /**
     * Ask whether a node holds intact copies of blocks, from their headers alone (no block data is
     * read or sent): replica repair's presence check. Payload: {@code count i32 | (keyLength u16 |
     * key utf8 | length i32 | crc32c i32)*}, at most {@code Payloads#MAX_CHECKED_BLOCKS} entries.
     * Answer: {@link #DATA} holding {@code count i32 | (state u8 (0 intact, 1 missing, 2 corrupt) |
     * detailLength u16 | detail utf8)*}, one entry per requested block, in request order.
     * Introduced within protocol version 2; a node of an earlier build closes the connection on it,
     * which the asker treats as "no answer" (the holder still counts).
     */
    CHECK_BLOCKS(18),
    /**
     * Ask a node for the links it measured from its own transfers (blocks it read from peers or
     * sent to them), so that a restoring node learns the links between the holders it plans
     * through. Payload: empty. Answer: {@link #DATA} holding {@code count i32 | (fromLength u16 |
     * from utf8 | toLength u16 | to utf8 | bytesPerSecond f64 | ageMillis i64)*} (see {@link
     * MeasuredLink}). Introduced within protocol version 2; an earlier build answers nothing useful,
     * which the asker treats as "nothing measured".
     */
    LINKS(19),

    /** Success; without a body unless the request's answer says otherwise. */
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

    /**
     * Whether a request of this type sends or fetches a whole block: such requests take their own
     * connection to a peer, so that a ping or a manifest never waits behind megabytes on a slow link.
     */
    public boolean carriesBlock() {
        return this == PUT_BLOCK || this == GET_BLOCK || this == RELAY_BLOCK;
    }

    /** Whether this type answers a request (as opposed to asking something). */
    public boolean isResponse() {
        return this == OK || this == DATA || this == ERROR;
    }
}
