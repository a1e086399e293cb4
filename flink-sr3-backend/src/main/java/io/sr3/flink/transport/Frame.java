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
 * <p>On a connection authenticated with a shared secret, every frame after the handshake is
 * followed by a 32-byte MAC ({@code FrameMac}). A frame whose magic, version, checksum or MAC is
 * wrong, or whose length exceeds the receiver's maximum frame size, closes the connection:
 * nothing after it on that stream can be trusted.
 *
 * <p>Version 2 (this one) brought the handshake in which both sides contribute nonces and the
 * per-frame MAC; version 1 peers are refused.
 */
public record Frame(MessageType type, long requestId, byte[] payload) {

    /** "SR3F" in ASCII. */
    public static final int MAGIC = 0x53523346;

    /** The protocol version this build speaks. */
    public static final byte VERSION = 2;

    /** The lowest protocol version this build still accepts. */
    public static final byte LOWEST_COMPATIBLE_VERSION = 2;

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
