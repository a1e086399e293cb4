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

    /**
     * {@code ZERO_BYTES[k]} appends 2^k zero bytes to a message, as a linear operator on its CRC:
     * the one-zero-bit operator squared three times makes one zero byte, each next one doubles it.
     */
    private static final int[][] ZERO_BYTES = zeroByteOperators();

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
     * of {@code b}: at most one 32x32 bit-matrix product per bit of the length, with the operators
     * for 2^k zero bytes computed once ({@link #ZERO_BYTES}), not a pass over the bytes.
     */
    public static int combine(int crcA, int crcB, long lengthB) {
        int crc = crcA;
        long remaining = lengthB;
        for (int k = 0; remaining > 0; k++, remaining >>>= 1) {
            if ((remaining & 1) != 0) {
                crc = times(ZERO_BYTES[k], crc);
            }
        }
        return crc ^ crcB;
    }

    private static int[][] zeroByteOperators() {
        int[] operator = new int[32];
        operator[0] = POLYNOMIAL;
        for (int n = 1, row = 1; n < 32; n++, row <<= 1) {
            operator[n] = row;
        }
        for (int bits = 1; bits < 8; bits *= 2) {
            operator = square(operator);
        }
        int[][] operators = new int[63][];
        operators[0] = operator;
        for (int k = 1; k < operators.length; k++) {
            operators[k] = square(operators[k - 1]);
        }
        return operators;
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

    private static int[] square(int[] matrix) {
        int[] square = new int[32];
        for (int n = 0; n < 32; n++) {
            square[n] = times(matrix, matrix[n]);
        }
        return square;
    }
}
