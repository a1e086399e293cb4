package io.sr3.flink.transport;

import java.util.Arrays;
import java.util.Objects;

/**
 * One message on an sr3 connection.
 *
 * <p>Wire format, all integers big-endian, drawn here because every peer must agree on it:
 *
 * <pre>
 * +----------+---------+------+------------+-------------+-------------+-----------------+
 * | magic    | version | type | request id | length      | crc32c      | payload         |
 * | 4 bytes  | 1 byte  | 1 B  | 8 bytes    | 4 bytes     | 4 bytes     | length bytes    |
 * | "SR3F"   |         |      | correlates | of payload  | of payload  |                 |
 * +----------+---------+------+------------+-------------+-------------+-----------------+
 * </pre>
 *
 * <p>On a connection authenticated with a shared secret, every frame after the handshake is
 * followed by a 32-byte MAC ({@code FrameMac}). A frame whose magic, version, checksum or MAC is
 * wrong, or whose length exceeds the receiver's maximum frame size, closes the connection:
 * nothing after it on that stream can be trusted.
 *
 * <p>In memory a payload is two arrays, head and block (a block's data, or nothing), which are one
 * payload on the wire: a block is neither joined to its key nor checksummed twice on its way.
 *
 * <p>Version 2 (this one) brought the handshake in which both sides contribute nonces and the
 * per-frame MAC; version 1 peers are refused.
 */
public record Frame(MessageType type, long requestId, byte[] head, byte[] block, int blockCrc) {

    /** "SR3F" in ASCII. */
    public static final int MAGIC = 0x53523346;

    /** The protocol version this build speaks. */
    public static final byte VERSION = 2;

    /** The lowest protocol version this build still accepts. */
    public static final byte LOWEST_COMPATIBLE_VERSION = 2;

    /** Bytes before the payload. */
    public static final int HEADER_SIZE = 4 + 1 + 1 + 8 + 4 + 4;

    private static final byte[] EMPTY = new byte[0];

    /**
     * @param head the payload's first bytes (a request's key, say)
     * @param block the payload's last bytes: a block's data, kept apart so that it is never
     *     copied into a joined array and its checksum is computed once, where it was filled
     * @param blockCrc the CRC32C of {@code block}; the frame's checksum is combined from it
     */
    public Frame {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(block, "block");
    }

    /** A frame whose payload has no block part. */
    public Frame(MessageType type, long requestId, byte[] payload) {
        this(type, requestId, payload, EMPTY, 0);
    }

    /** A frame whose whole payload is a block with the given CRC32C. */
    public static Frame ofBlock(MessageType type, long requestId, byte[] block, int blockCrc) {
        return new Frame(type, requestId, EMPTY, block, blockCrc);
    }

    /** The same frame under another request id. */
    public Frame withRequestId(long id) {
        return new Frame(type, id, head, block, blockCrc);
    }

    /** Bytes of payload: head and block. */
    public int length() {
        return head.length + block.length;
    }

    /**
     * The whole payload. Joins head and block into a new array only when both hold bytes; block
     * carrying requests are read through {@link #head} and {@link #block} instead.
     */
    public byte[] payload() {
        if (block.length == 0) {
            return head;
        }
        if (head.length == 0) {
            return block;
        }
        byte[] joined = Arrays.copyOf(head, head.length + block.length);
        System.arraycopy(block, 0, joined, head.length, block.length);
        return joined;
    }

    @Override
    public String toString() {
        return type + "#" + requestId + "(" + length() + " bytes)";
    }
}
