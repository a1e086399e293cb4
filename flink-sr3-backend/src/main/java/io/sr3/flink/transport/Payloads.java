package io.sr3.flink.transport;

import javax.annotation.Nullable;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Encoders and decoders for the payload layouts documented on {@link MessageType}. */
public final class Payloads {

    private Payloads() {}

    public static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    public static String utf8(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** {@code keyLength u16 | key utf8 | data}. */
    public static byte[] putBlock(String key, byte[] data) {
        return new Frame(MessageType.PUT_BLOCK, 0, putBlockHead(key), ByteBuffer.wrap(data), 0).payload();
    }

    /**
     * A {@link MessageType#PUT_BLOCK} request whose data travels as the frame's block, uncopied.
     *
     * @param crc32c the CRC32C of {@code data}
     */
    public static Frame putBlock(String key, byte[] data, int crc32c) {
        return putBlock(key, ByteBuffer.wrap(data), crc32c);
    }

    /** {@link #putBlock(String, byte[], int)} of the bytes between {@code data}'s position and limit. */
    public static Frame putBlock(String key, ByteBuffer data, int crc32c) {
        return new Frame(MessageType.PUT_BLOCK, 0, putBlockHead(key), data, crc32c);
    }

    private static byte[] putBlockHead(String key) {
        byte[] keyBytes = utf8(key);
        if (keyBytes.length > 0xFFFF) {
            throw new IllegalArgumentException("Block key longer than 65535 bytes: " + key);
        }
        return ByteBuffer.allocate(2 + keyBytes.length).putShort((short) keyBytes.length).put(keyBytes).array();
    }

    /** The answer to a {@link MessageType#PUT_BLOCK}: how long the store write took. */
    public static byte[] stored(long storeNanos) {
        return ByteBuffer.allocate(Long.BYTES).putLong(storeNanos).array();
    }

    /** How long the store write of a {@link MessageType#PUT_BLOCK} took, 0 if the answer does not say. */
    public static long storeNanos(byte[] answer) {
        return answer.length == Long.BYTES ? Math.max(0, ByteBuffer.wrap(answer).getLong()) : 0;
    }

    /** A received {@link MessageType#PUT_BLOCK} request: the key, the data (position to limit) and its CRC32C. */
    public record BlockPut(String key, ByteBuffer data, int crc32c) {}

    /**
     * Reads a {@link MessageType#PUT_BLOCK} request: split into key and block by the frame
     * decoder, whose checksum of the block is reused; or, from a frame built in this process,
     * one joined payload.
     */
    public static BlockPut putBlock(Frame request) {
        if (request.block().hasRemaining() || request.head().length == 2 + keyLength(request.head())) {
            return new BlockPut(putBlockKey(request.head()), request.block(), request.blockCrc());
        }
        byte[] payload = request.head();
        byte[] data = putBlockData(payload);
        return new BlockPut(putBlockKey(payload), ByteBuffer.wrap(data), Crc32c.of(data));
    }

    /** The key of a {@link MessageType#PUT_BLOCK} payload. */
    public static String putBlockKey(byte[] payload) {
        int keyLength = keyLength(payload);
        return new String(payload, 2, keyLength, StandardCharsets.UTF_8);
    }

    /** The data of a {@link MessageType#PUT_BLOCK} payload. */
    public static byte[] putBlockData(byte[] payload) {
        return Arrays.copyOfRange(payload, 2 + keyLength(payload), payload.length);
    }

    private static int keyLength(byte[] payload) {
        if (payload.length < 2) {
            throw new IllegalArgumentException("PUT_BLOCK payload of " + payload.length + " bytes has no key length");
        }
        int keyLength = ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
        if (2 + keyLength > payload.length) {
            throw new IllegalArgumentException("PUT_BLOCK key length " + keyLength + " exceeds payload of " + payload.length + " bytes");
        }
        return keyLength;
    }

    /** A decoded {@link MessageType#COMPARE_AND_PUT} request; a null value stands for "absent". */
    public record CompareAndPut(String key, @Nullable byte[] expected, @Nullable byte[] replacement) {}

    public static byte[] compareAndPut(String key, @Nullable byte[] expected, @Nullable byte[] replacement) {
        byte[] keyBytes = utf8(key);
        if (keyBytes.length > 0xFFFF) {
            throw new IllegalArgumentException("Key longer than 65535 bytes: " + key);
        }
        ByteBuffer buffer = ByteBuffer.allocate(2 + keyBytes.length + 8 + lengthOf(expected) + lengthOf(replacement));
        buffer.putShort((short) keyBytes.length).put(keyBytes);
        putOptional(buffer, expected);
        putOptional(buffer, replacement);
        return buffer.array();
    }

    public static CompareAndPut compareAndPut(byte[] payload) {
        int keyLength = keyLength(payload);
        ByteBuffer buffer = ByteBuffer.wrap(payload, 2 + keyLength, payload.length - 2 - keyLength);
        String key = new String(payload, 2, keyLength, StandardCharsets.UTF_8);
        byte[] expected = getOptional(buffer, "expected value");
        byte[] replacement = getOptional(buffer, "replacement");
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("COMPARE_AND_PUT payload has " + buffer.remaining() + " trailing bytes");
        }
        return new CompareAndPut(key, expected, replacement);
    }

    /** The answer to a {@link MessageType#COMPARE_AND_PUT}: {@code swapped u8 | foundLength i32 (-1: absent) | found}. */
    public static byte[] swap(boolean swapped, @Nullable byte[] found) {
        ByteBuffer buffer = ByteBuffer.allocate(1 + 4 + lengthOf(found));
        buffer.put((byte) (swapped ? 1 : 0));
        putOptional(buffer, found);
        return buffer.array();
    }

    /** Whether a {@link #swap} answer says the value was replaced. */
    public static boolean swapped(byte[] payload) {
        if (payload.length < 5) {
            throw new IllegalArgumentException("COMPARE_AND_PUT answer of " + payload.length + " bytes is too short");
        }
        return payload[0] == 1;
    }

    /** The value a {@link #swap} answer found, null if the key was absent. */
    @Nullable
    public static byte[] swapFound(byte[] payload) {
        swapped(payload); // checks the length
        ByteBuffer buffer = ByteBuffer.wrap(payload, 1, payload.length - 1);
        byte[] found = getOptional(buffer, "found value");
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("COMPARE_AND_PUT answer has " + buffer.remaining() + " trailing bytes");
        }
        return found;
    }

    private static int lengthOf(@Nullable byte[] value) {
        return value == null ? 0 : value.length;
    }

    private static void putOptional(ByteBuffer buffer, @Nullable byte[] value) {
        buffer.putInt(value == null ? -1 : value.length);
        if (value != null) {
            buffer.put(value);
        }
    }

    @Nullable
    private static byte[] getOptional(ByteBuffer buffer, String what) {
        if (buffer.remaining() < 4) {
            throw new IllegalArgumentException("COMPARE_AND_PUT " + what + " has no length");
        }
        int length = buffer.getInt();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > buffer.remaining()) {
            throw new IllegalArgumentException("COMPARE_AND_PUT " + what + " of " + length + " bytes exceeds the "
                    + buffer.remaining() + " bytes left");
        }
        byte[] value = new byte[length];
        buffer.get(value);
        return value;
    }

    /** {@code count i32 | (length u16 | utf8)*}. */
    public static byte[] stringList(List<String> values) {
        List<byte[]> encoded = new ArrayList<>(values.size());
        int size = 4;
        for (String value : values) {
            byte[] bytes = utf8(value);
            encoded.add(bytes);
            size += 2 + bytes.length;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putInt(encoded.size());
        for (byte[] bytes : encoded) {
            buffer.putShort((short) bytes.length).put(bytes);
        }
        return buffer.array();
    }

    public static List<String> stringList(byte[] payload) {
        ByteBuffer buffer = ByteBuffer.wrap(payload);
        int count = count(buffer, 2, "String list");
        List<String> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            values.add(utf8(shortPrefixed(buffer, "String list entry " + i)));
        }
        return values;
    }

    /** A count read from {@code buffer}, checked against the bytes left for entries of at least {@code minEntryBytes}. */
    private static int count(ByteBuffer buffer, int minEntryBytes, String what) {
        if (buffer.remaining() < 4) {
            throw new IllegalArgumentException(what + " of " + buffer.remaining() + " bytes has no count");
        }
        int count = buffer.getInt();
        if (count < 0 || count > buffer.remaining() / minEntryBytes) {
            throw new IllegalArgumentException(what + " claims " + count + " entries in the " + buffer.remaining()
                    + " bytes left");
        }
        return count;
    }

    /** {@code length u16 | bytes}, with the length checked against the bytes left. */
    static byte[] shortPrefixed(ByteBuffer buffer, String what) {
        if (buffer.remaining() < 2) {
            throw new IllegalArgumentException(what + " has no length (" + buffer.remaining() + " bytes left)");
        }
        int length = buffer.getShort() & 0xFFFF;
        if (length > buffer.remaining()) {
            throw new IllegalArgumentException(what + " of " + length + " bytes exceeds the " + buffer.remaining()
                    + " bytes left");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }

    /** {@code count i32 | (nameLength u16 | name utf8 | value i64)*}, in the map's order. */
    public static byte[] longMap(java.util.Map<String, Long> values) {
        int size = 4;
        for (String name : values.keySet()) {
            size += 2 + utf8(name).length + 8;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putInt(values.size());
        values.forEach((name, value) -> {
            byte[] bytes = utf8(name);
            buffer.putShort((short) bytes.length).put(bytes).putLong(value);
        });
        return buffer.array();
    }

    public static java.util.Map<String, Long> longMap(byte[] payload) {
        ByteBuffer buffer = ByteBuffer.wrap(payload);
        int count = count(buffer, 10, "Counter map");
        java.util.Map<String, Long> values = new java.util.LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            String name = utf8(shortPrefixed(buffer, "Counter name " + i));
            if (buffer.remaining() < 8) {
                throw new IllegalArgumentException("Counter " + name + " has no value (" + buffer.remaining()
                        + " bytes left)");
            }
            values.put(name, buffer.getLong());
        }
        return values;
    }

    /** The most blocks one {@link MessageType#CHECK_BLOCKS} request asks about; callers split longer lists. */
    public static final int MAX_CHECKED_BLOCKS = 1024;

    /** One block a {@link MessageType#CHECK_BLOCKS} request asks about: the content a manifest expects. */
    public record ExpectedBlock(String key, int length, int crc32c) {}

    /** One entry of a {@link MessageType#CHECK_BLOCKS} answer: state 0 intact, 1 missing, 2 corrupt, and why. */
    public record BlockState(int state, String detail) {}

    /** {@code count i32 | (keyLength u16 | key utf8 | length i32 | crc32c i32)*}. */
    public static byte[] checkBlocks(List<ExpectedBlock> blocks) {
        if (blocks.size() > MAX_CHECKED_BLOCKS) {
            throw new IllegalArgumentException("CHECK_BLOCKS of " + blocks.size() + " blocks; at most "
                    + MAX_CHECKED_BLOCKS + " per request");
        }
        List<byte[]> keys = new ArrayList<>(blocks.size());
        int size = 4;
        for (ExpectedBlock block : blocks) {
            byte[] key = utf8(block.key());
            if (key.length > 0xFFFF) {
                throw new IllegalArgumentException("Block key longer than 65535 bytes: " + block.key());
            }
            keys.add(key);
            size += 2 + key.length + 8;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putInt(blocks.size());
        for (int i = 0; i < blocks.size(); i++) {
            buffer.putShort((short) keys.get(i).length).put(keys.get(i));
            buffer.putInt(blocks.get(i).length()).putInt(blocks.get(i).crc32c());
        }
        return buffer.array();
    }

    public static List<ExpectedBlock> checkBlocks(byte[] payload) {
        ByteBuffer buffer = ByteBuffer.wrap(payload);
        int count = count(buffer, 2 + 8, "CHECK_BLOCKS request");
        if (count > MAX_CHECKED_BLOCKS) {
            throw new IllegalArgumentException("CHECK_BLOCKS request of " + count + " blocks; at most "
                    + MAX_CHECKED_BLOCKS);
        }
        List<ExpectedBlock> blocks = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String key = utf8(shortPrefixed(buffer, "CHECK_BLOCKS key " + i));
            if (buffer.remaining() < 8) {
                throw new IllegalArgumentException("CHECK_BLOCKS entry " + key + " has no length and CRC32C");
            }
            blocks.add(new ExpectedBlock(key, buffer.getInt(), buffer.getInt()));
        }
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("CHECK_BLOCKS request has " + buffer.remaining() + " trailing bytes");
        }
        return blocks;
    }

    /** {@code count i32 | (state u8 | detailLength u16 | detail utf8)*}; details are cut to 1,000 characters. */
    public static byte[] blockStates(List<BlockState> states) {
        List<byte[]> details = new ArrayList<>(states.size());
        int size = 4;
        for (BlockState state : states) {
            String detail = state.detail();
            byte[] bytes = utf8(detail.length() > 1000 ? detail.substring(0, 1000) : detail);
            details.add(bytes);
            size += 1 + 2 + bytes.length;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putInt(states.size());
        for (int i = 0; i < states.size(); i++) {
            buffer.put((byte) states.get(i).state()).putShort((short) details.get(i).length).put(details.get(i));
        }
        return buffer.array();
    }

    public static List<BlockState> blockStates(byte[] payload) {
        ByteBuffer buffer = ByteBuffer.wrap(payload);
        int count = count(buffer, 1 + 2, "CHECK_BLOCKS answer");
        List<BlockState> states = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            if (!buffer.hasRemaining()) {
                throw new IllegalArgumentException("CHECK_BLOCKS answer ends before entry " + i + " of " + count);
            }
            int state = buffer.get() & 0xFF;
            if (state > 2) {
                throw new IllegalArgumentException("CHECK_BLOCKS answer entry " + i + " has unknown state " + state);
            }
            states.add(new BlockState(state, utf8(shortPrefixed(buffer, "CHECK_BLOCKS detail " + i))));
        }
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("CHECK_BLOCKS answer has " + buffer.remaining() + " trailing bytes");
        }
        return states;
    }

    /** {@code errorCode u8 | message utf8}. */
    public static byte[] error(ErrorCode code, String message) {
        byte[] text = utf8(message);
        byte[] payload = new byte[1 + text.length];
        payload[0] = (byte) code.code();
        System.arraycopy(text, 0, payload, 1, text.length);
        return payload;
    }

    public static ErrorCode errorCode(byte[] payload) {
        return payload.length == 0 ? ErrorCode.INTERNAL : ErrorCode.fromCode(payload[0] & 0xFF);
    }

    public static String errorMessage(byte[] payload) {
        return payload.length <= 1 ? "" : new String(payload, 1, payload.length - 1, StandardCharsets.UTF_8);
    }
}
