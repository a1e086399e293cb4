package io.sr3.flink.transport;

import java.util.zip.CRC32C;

/**
 * CRC32C helpers for the frame codec, among them {@link #combine}: the checksum of two
 * concatenated byte ranges from their separate checksums, so a block's checksum, computed once
 * where it was filled, also yields the checksum of the frame that carries it.
 */
public final class Crc32c {

    /** The reflected CRC32C (Castagnoli) polynomial. */
    private static final int POLYNOMIAL = 0x82F63B78;

    private Crc32c() {}

    public static int of(byte[] bytes) {
        return of(bytes, 0, bytes.length);
    }

    public static int of(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    /**
     * The CRC32C of {@code a || b}, given the CRC32C of {@code a}, that of {@code b} and the length
     * of {@code b}. Costs O(log length) 32x32 bit-matrix products, not a pass over the bytes.
     */
    public static int combine(int crcA, int crcB, long lengthB) {
        if (lengthB <= 0) {
            return crcA;
        }
        // Appending n zero bytes to a message is linear in its CRC: square the one-zero-bit
        // operator up to one zero byte, then apply the powers of two that make up lengthB.
        int[] odd = new int[32];
        odd[0] = POLYNOMIAL;
        for (int n = 1, row = 1; n < 32; n++, row <<= 1) {
            odd[n] = row;
        }
        int[] even = new int[32];
        square(even, odd); // two zero bits
        square(odd, even); // four zero bits
        int crc = crcA;
        long remaining = lengthB;
        while (true) {
            square(even, odd); // the first pass makes one zero byte, each next one doubles it
            if ((remaining & 1) != 0) {
                crc = times(even, crc);
            }
            remaining >>>= 1;
            if (remaining == 0) {
                break;
            }
            square(odd, even);
            if ((remaining & 1) != 0) {
                crc = times(odd, crc);
            }
            remaining >>>= 1;
            if (remaining == 0) {
                break;
            }
        }
        return crc ^ crcB;
    }

    private static int times(int[] matrix, int vector) {
        int sum = 0;
        for (int i = 0; vector != 0; i++, vector >>>= 1) {
            if ((vector & 1) != 0) {
                sum ^= matrix[i];
            }
        }
        return sum;
    }

    private static void square(int[] square, int[] matrix) {
        for (int n = 0; n < 32; n++) {
            square[n] = times(matrix, matrix[n]);
        }
    }
}
