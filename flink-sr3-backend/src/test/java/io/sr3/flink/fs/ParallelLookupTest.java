package io.sr3.flink.fs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ParallelLookupTest {

    @Test
    void lookupsRunAtOnceAndTheirResultsKeepTheItemsOrder() throws Exception {
        List<Integer> items = IntStream.range(0, ParallelLookup.THREADS).boxed().toList();
        CountDownLatch allStarted = new CountDownLatch(items.size());

        List<String> results = ParallelLookup.of(items, item -> {
            allStarted.countDown();
            // Returns only if every lookup is running at the same time.
            if (!awaitQuietly(allStarted)) {
                throw new IOException("lookup " + item + " ran while others had not started");
            }
            return "file-" + item;
        });

        assertThat(results).containsExactly("file-0", "file-1", "file-2", "file-3", "file-4", "file-5", "file-6",
                "file-7");
    }

    @Test
    void theFirstFailureInItemOrderIsThrown() {
        assertThatThrownBy(() -> ParallelLookup.of(List.of(1, 2, 3), item -> {
            if (item >= 2) {
                throw new IOException("no manifest for file-" + item);
            }
            return item;
        })).isInstanceOf(IOException.class).hasMessage("no manifest for file-2");
    }

    private static boolean awaitQuietly(CountDownLatch latch) {
        try {
            return latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
