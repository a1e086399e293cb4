package io.sr3.flink.transport;

import java.nio.ByteBuffer;
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
 * sealed ({@code FrameSeal}): its payload and checksum travel encrypted with AES-256-GCM, the
 * checksum field of its header is 0, and a 16-byte tag follows (20 bytes more than the length
 * field says). A frame whose magic, version, checksum or tag is wrong, or whose length exceeds
 * the receiver's maximum frame size, closes the connection: nothing after it on that stream can
 * be trusted.
 *
 * <p>In memory a payload is two parts, a head array and a block buffer (a block's data between
 * its position and limit, or nothing), which are one payload on the wire: a block is neither
 * joined to its key nor checksummed twice on its way. A received block of a {@link
 * MessageType#DATA} answer may sit in a direct buffer lent by the node's {@link BlockBuffers};
 * whoever consumes it gives it back there. Nothing moves a block buffer's position: readers take
 * a {@link ByteBuffer#duplicate}.
 *
 * <p>Version 2 brought the handshake in which both sides contribute nonces and a per-frame MAC;
 * version 3 (this one) seals frames instead of appending an HMAC-SHA256. Peers of other versions
 * are refused.
 */
public record Frame(MessageType type, long requestId, byte[] head, ByteBuffer block, int blockCrc) {

    /** "SR3F" in ASCII. */
    public static final int MAGIC = 0x53523346;

    /** The protocol version this build speaks. */
    public static final byte VERSION = 3;

    /** The lowest protocol version this build still accepts. */
    public static final byte LOWEST_COMPATIBLE_VERSION = 3;

    /** Bytes before the payload. */
    public static final int HEADER_SIZE = 4 + 1 + 1 + 8 + 4 + 4;

    private static final byte[] EMPTY = new byte[0];

    private static final ByteBuffer NO_BLOCK = ByteBuffer.allocate(0);

    /**
     * @param head the payload's first bytes (a request's key, say)
     * @param block the payload's last bytes, between its position and limit: a block's data,
     *     kept apart so that it is never copied into a joined array and its checksum is computed
     *     once, where it was filled
     * @param blockCrc the CRC32C of {@code block}; the frame's checksum is combined from it
     */
    public Frame {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(block, "block");
    }

    /** A frame whose payload has no block part. */
    public Frame(MessageType type, long requestId, byte[] payload) {
        this(type, requestId, payload, NO_BLOCK, 0);
    }

    /** A frame whose whole payload is a block with the given CRC32C. */
    public static Frame ofBlock(MessageType type, long requestId, byte[] block, int blockCrc) {
        return new Frame(type, requestId, EMPTY, ByteBuffer.wrap(block), blockCrc);
    }

    /** A frame whose whole payload is the block between the buffer's position and limit, with the given CRC32C. */
    public static Frame ofBlock(MessageType type, long requestId, ByteBuffer block, int blockCrc) {
        return new Frame(type, requestId, EMPTY, block, blockCrc);
    }

    /** The same frame under another request id. */
    public Frame withRequestId(long id) {
        return new Frame(type, id, head, block, blockCrc);
    }

    /** Bytes of payload: head and block. */
    public int length() {
        return head.length + block.remaining();
    }

    /** The block's bytes as an array: the buffer's own array when it is exactly that, else a copy. */
    public byte[] blockBytes() {
        if (block.hasArray() && block.arrayOffset() == 0 && block.position() == 0
                && block.remaining() == block.array().length) {
            return block.array();
        }
        byte[] copy = new byte[block.remaining()];
        block.duplicate().get(copy);
        return copy;
    }

    /**
     * The whole payload. Joins head and block into a new array only when both hold bytes; block
     * carrying requests are read through {@link #head} and {@link #block} instead.
     */
    public byte[] payload() {
        if (!block.hasRemaining()) {
            return head;
        }
        if (head.length == 0) {
            return blockBytes();
        }
        byte[] joined = Arrays.copyOf(head, head.length + block.remaining());
        block.duplicate().get(joined, head.length, block.remaining());
        return joined;
    }

    @Override
    public String toString() {
        return type + "#" + requestId + "(" + length() + " bytes)";
    }
}
