package io.sr3.flink.transport;

import javax.annotation.Nullable;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

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

    /**
     * The most hops the wire format carries (a u8 count). A receiver refuses shorter routes too
     * when they are deeper than its ring: see {@link #routeProblem}.
     */
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

    /**
     * Why this route must not be followed by a node whose ring has {@code ringSize} members with
     * the addresses {@code liveMemberIds}; null when it may. A peer may only send a block through
     * members of the ring (never to an arbitrary {@code host:port}), through each at most once (a
     * route cannot loop a block between the same nodes), and over at most as many hops as the
     * ring has members (the deepest route visits each member once).
     *
     * @param liveMemberIds the {@link #route} form ({@code host:port}) of every member of the
     *     receiver's placement, suspected ones included
     * @param ringSize the number of members of the receiver's placement
     */
    @Nullable
    public String routeProblem(Collection<String> liveMemberIds, int ringSize) {
        if (route.size() > ringSize) {
            return "relay route of block " + key + " has " + route.size() + " hops, more than the " + ringSize
                    + " members of the ring: " + route;
        }
        Set<String> seen = new HashSet<>();
        for (String hop : route) {
            if (!seen.add(hop)) {
                return "relay route of block " + key + " names " + hop + " twice: " + route;
            }
            if (!liveMemberIds.contains(hop)) {
                return "relay route of block " + key + " names " + hop + ", which is not a live member of the ring: "
                        + route;
            }
        }
        return null;
    }

    /**
     * Decodes a payload, rejecting one that is truncated, too long, or claims a negative length.
     * Every count and length is checked against the bytes left before anything is allocated.
     */
    public static RelayRequest decode(byte[] payload) {
        ByteBuffer buffer = ByteBuffer.wrap(payload);
        if (buffer.remaining() < 8) {
            throw truncated(payload, "crc32c and length", 8, buffer.remaining());
        }
        int crc = buffer.getInt();
        int length = buffer.getInt();
        String key = string(payload, buffer, "key");
        if (!buffer.hasRemaining()) {
            throw truncated(payload, "hop count", 1, 0);
        }
        int hopCount = buffer.get() & 0xFF;
        if (hopCount * 2 > buffer.remaining()) {
            throw new IllegalArgumentException("RELAY_BLOCK payload of " + payload.length + " bytes is truncated: hop count "
                    + hopCount + " does not fit the " + buffer.remaining() + " bytes left (each hop takes at least 2)");
        }
        List<String> route = new ArrayList<>(hopCount);
        for (int i = 0; i < hopCount; i++) {
            route.add(string(payload, buffer, "hop " + i));
        }
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("RELAY_BLOCK payload has " + buffer.remaining() + " trailing bytes");
        }
        return new RelayRequest(key, length, crc, route);
    }

    private static String string(byte[] payload, ByteBuffer buffer, String field) {
        if (buffer.remaining() < 2) {
            throw truncated(payload, field + " length", 2, buffer.remaining());
        }
        int length = buffer.getShort() & 0xFFFF;
        if (length > buffer.remaining()) {
            throw truncated(payload, field + " of " + length + " bytes", length, buffer.remaining());
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static IllegalArgumentException truncated(byte[] payload, String field, int needed, int left) {
        return new IllegalArgumentException("RELAY_BLOCK payload of " + payload.length + " bytes is truncated: the "
                + field + " needs " + needed + " bytes, " + left + " left");
    }
}
