package io.sr3.flink.transport;

import javax.annotation.concurrent.NotThreadSafe;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Makes fuzz inputs from one seeded {@link Random}: random bytes, and valid encodings damaged the
 * way a broken or hostile peer damages them (bit flips, boundary bytes, truncation, trailing
 * junk, length fields overwritten with extreme values). The same seed gives the same inputs.
 */
@NotThreadSafe
public final class Mutator {

    /** The longest random input, and about the most bytes an extension adds. */
    public static final int MAX_RANDOM_LENGTH = 4096;

    /** Bytes that sit on the boundaries of signed and unsigned bytes. */
    private static final byte[] BOUNDARY_BYTES = {0x00, (byte) 0xFF, 0x7F, (byte) 0x80};

    /** Values that break length and count fields: negative, huge, off by one, u16 and i16 limits. */
    private static final int[] EXTREME_INTS = {Integer.MAX_VALUE, Integer.MIN_VALUE, -1, 0, 1, 0x7FFF, 0x8000,
            0xFFFF, 0x10000, 0x7FFFFFFE, 4096, 4097};

    private final Random random;

    public Mutator(Random random) {
        this.random = random;
    }

    public Random random() {
        return random;
    }

    /** One input: about a quarter pure random bytes, the rest a mutation of one of {@code valid}. */
    public byte[] next(List<byte[]> valid) {
        if (valid.isEmpty() || random.nextInt(4) == 0) {
            return randomBytes(MAX_RANDOM_LENGTH);
        }
        return mutate(valid.get(random.nextInt(valid.size())));
    }

    /** Random bytes of a random length in {@code 0..maxLength}, half of them at most 64 bytes long. */
    public byte[] randomBytes(int maxLength) {
        // Short inputs reach the early length checks, which uniform lengths up to 4 KiB would rarely do.
        int bound = random.nextBoolean() ? Math.min(64, maxLength) : maxLength;
        byte[] bytes = new byte[random.nextInt(bound + 1)];
        random.nextBytes(bytes);
        return bytes;
    }

    /** {@code valid} with one to four mutations; never the same bytes as {@code valid}. */
    public byte[] mutate(byte[] valid) {
        byte[] bytes = valid;
        int rounds = 1 + random.nextInt(4);
        for (int i = 0; i < rounds || Arrays.equals(bytes, valid); i++) {
            bytes = mutateOnce(bytes);
        }
        return bytes;
    }

    private byte[] mutateOnce(byte[] in) {
        if (in.length == 0) {
            return extend(in);
        }
        byte[] bytes = in.clone();
        switch (random.nextInt(7)) {
            case 0 -> bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
            case 1 -> bytes[random.nextInt(bytes.length)] = BOUNDARY_BYTES[random.nextInt(BOUNDARY_BYTES.length)];
            case 2 -> bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
            case 3 -> {
                return Arrays.copyOf(bytes, random.nextInt(bytes.length));
            }
            case 4 -> {
                return extend(bytes);
            }
            case 5 -> overwriteInt(bytes);
            default -> overwriteShort(bytes);
        }
        return bytes;
    }

    private byte[] extend(byte[] bytes) {
        byte[] extended = Arrays.copyOf(bytes, bytes.length + 1 + random.nextInt(random.nextBoolean() ? 8 : MAX_RANDOM_LENGTH));
        byte[] tail = new byte[extended.length - bytes.length];
        random.nextBytes(tail);
        System.arraycopy(tail, 0, extended, bytes.length, tail.length);
        return extended;
    }

    /** An extreme value over a 4-byte window (a count, a length, a port); a shorter array gets its prefix. */
    private void overwriteInt(byte[] bytes) {
        byte[] value = ByteBuffer.allocate(4).putInt(EXTREME_INTS[random.nextInt(EXTREME_INTS.length)]).array();
        int at = random.nextInt(Math.max(1, bytes.length - 3));
        System.arraycopy(value, 0, bytes, at, Math.min(4, bytes.length - at));
    }

    /** An extreme value over a 2-byte window (a u16 string length). */
    private void overwriteShort(byte[] bytes) {
        if (bytes.length < 2) {
            bytes[0] = BOUNDARY_BYTES[random.nextInt(BOUNDARY_BYTES.length)];
            return;
        }
        int value = EXTREME_INTS[random.nextInt(EXTREME_INTS.length)];
        int at = random.nextInt(bytes.length - 1);
        bytes[at] = (byte) (value >>> 8);
        bytes[at + 1] = (byte) value;
    }

    /** Hex of {@code bytes}, for failure messages that must let the input be replayed. */
    public static String hex(byte[] bytes) {
        StringBuilder text = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            text.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        }
        return text.toString();
    }

    /** The bytes of a {@link #hex} string: to replay a reported input in a unit test. */
    public static byte[] unhex(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex, 2 * i, 2 * i + 2, 16);
        }
        return bytes;
    }
}
