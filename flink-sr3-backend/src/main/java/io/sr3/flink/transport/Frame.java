package io.sr3.flink.transport;

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
 * <p>A frame whose magic, version or checksum is wrong, or whose length exceeds the receiver's
 * maximum frame size, closes the connection: nothing after it on that stream can be trusted.
 */
public record Frame(MessageType type, long requestId, byte[] payload) {

    /** "SR3F" in ASCII. */
    public static final int MAGIC = 0x53523346;

    /** The protocol version this build speaks. */
    public static final byte VERSION = 1;

    /** The lowest protocol version this build still accepts. */
    public static final byte LOWEST_COMPATIBLE_VERSION = 1;

    /** Bytes before the payload. */
    public static final int HEADER_SIZE = 4 + 1 + 1 + 8 + 4 + 4;

    public Frame {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(payload, "payload");
    }

    @Override
    public String toString() {
        return type + "#" + requestId + "(" + payload.length + " bytes)";
    }
}
