package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class Crc32cTest {

    @Test
    void combiningTheChecksumsOfTwoPartsGivesTheChecksumOfTheWhole() {
        Random random = new Random(20261202);
        for (int round = 0; round < 200; round++) {
            byte[] bytes = new byte[random.nextInt(round < 100 ? 64 : 1 << 20)];
            random.nextBytes(bytes);
            int split = bytes.length == 0 ? 0 : random.nextInt(bytes.length + 1);
            int a = Crc32c.of(bytes, 0, split);
            int b = Crc32c.of(bytes, split, bytes.length - split);
            assertThat(Crc32c.combine(a, b, bytes.length - split))
                    .as("%d bytes split at %d", bytes.length, split)
                    .isEqualTo(Crc32c.of(bytes));
        }
    }

    @Test
    void combinesAfterABlockLongerThanAnyOtherTestsUse() {
        Random random = new Random(7);
        byte[] bytes = new byte[5 * 1024 * 1024 + 4099];
        random.nextBytes(bytes);
        int split = 17;
        assertThat(Crc32c.combine(Crc32c.of(bytes, 0, split), Crc32c.of(bytes, split, bytes.length - split),
                bytes.length - split)).isEqualTo(Crc32c.of(bytes));
    }

    @Test
    void anEmptyPartChangesNothing() {
        byte[] bytes = "sr3 block".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertThat(Crc32c.combine(Crc32c.of(bytes), Crc32c.of(new byte[0]), 0)).isEqualTo(Crc32c.of(bytes));
        assertThat(Crc32c.combine(Crc32c.of(new byte[0]), Crc32c.of(bytes), bytes.length)).isEqualTo(Crc32c.of(bytes));
    }
}
