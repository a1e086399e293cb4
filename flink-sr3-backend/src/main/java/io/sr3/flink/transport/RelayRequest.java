package io.sr3.flink.transport;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The payload of {@link MessageType#RELAY_BLOCK}: which block to fetch, what it must look like,
 * and the hops still between the receiver and the holder.
 *
 * @param key the block key
 * @param length the block's length, as recorded in its manifest
 * @param crc32c the block's checksum, as recorded in its manifest
 * @param route node ids ({@code host:port}) to go through; the last one holds the block. Empty
 *     when the receiver is the holder.
 */
public record RelayRequest(String key, int length, int crc32c, List<String> route) {

    /** Longer routes are refused: no restore plan is deeper than this. */
    public static final int MAX_HOPS = 255;

    public RelayRequest {
        Objects.requireNonNull(key, "key");
        route = List.copyOf(route);
        if (length < 0) {
            throw new IllegalArgumentException("Relayed block " + key + " has negative length " + length);
        }
        if (route.size() > MAX_HOPS) {
            throw new IllegalArgumentException("Relay route of " + route.size() + " hops exceeds " + MAX_HOPS);
        }
    }

    /** The request the receiver sends on to {@code route.get(0)}. */
    public RelayRequest next() {
        if (route.isEmpty()) {
            throw new IllegalStateException("The receiver of " + key + " is its holder: there is no next hop");
        }
        return new RelayRequest(key, length, crc32c, route.subList(1, route.size()));
    }

    public byte[] encode() {
        byte[] keyBytes = Payloads.utf8(key);
        List<byte[]> hops = new ArrayList<>(route.size());
        int size = 4 + 4 + 2 + keyBytes.length + 1;
        for (String hop : route) {
            byte[] bytes = Payloads.utf8(hop);
            hops.add(bytes);
            size += 2 + bytes.length;
        }
        if (keyBytes.length > 0xFFFF) {
            throw new IllegalArgumentException("Block key longer than 65535 bytes: " + key);
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putInt(crc32c).putInt(length).putShort((short) keyBytes.length).put(keyBytes).put((byte) hops.size());
        for (byte[] hop : hops) {
            buffer.putShort((short) hop.length).put(hop);
        }
        return buffer.array();
    }

    /** Decodes a payload, rejecting one that is truncated, too long, or claims a negative length. */
    public static RelayRequest decode(byte[] payload) {
        try {
            ByteBuffer buffer = ByteBuffer.wrap(payload);
            int crc = buffer.getInt();
            int length = buffer.getInt();
            String key = string(buffer);
            int hopCount = buffer.get() & 0xFF;
            List<String> route = new ArrayList<>(hopCount);
            for (int i = 0; i < hopCount; i++) {
                route.add(string(buffer));
            }
            if (buffer.hasRemaining()) {
                throw new IllegalArgumentException("RELAY_BLOCK payload has " + buffer.remaining() + " trailing bytes");
            }
            return new RelayRequest(key, length, crc, route);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("RELAY_BLOCK payload of " + payload.length + " bytes is truncated");
        }
    }

    private static String string(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.getShort() & 0xFFFF];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
