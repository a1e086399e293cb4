package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.TestingRing;
import io.sr3.flink.testing.Deadline;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** A TaskManager's storage node that cannot start at once starts as soon as it can, without waiting for a file operation. */
class StorageNodeStarterTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path tempDir;

    @Test
    void retriesAFailedStartUntilItSucceedsAndThenStops() {
        AtomicInteger calls = new AtomicInteger();
        StorageNodeStarter starter = StorageNodeStarter.begin(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new IOException("attempt " + calls.get() + " fails");
            }
            return "started";
        }, Duration.ofMillis(10), Duration.ofMillis(40));

        Deadline.poll("the third attempt to succeed", TIMEOUT, starter::isDone, () -> calls + " calls");
        assertThat(starter.attempts()).isEqualTo(3);
        assertThat(calls).hasValue(3);
    }

    @Test
    void stopEndsTheRetries() {
        AtomicInteger calls = new AtomicInteger();
        StorageNodeStarter starter = StorageNodeStarter.begin(() -> {
            calls.incrementAndGet();
            throw new IOException("never starts");
        }, Duration.ofMillis(5), Duration.ofMillis(5));
        Deadline.poll("two failed attempts", TIMEOUT, () -> calls.get() >= 2);

        starter.stop();

        assertThat(starter.isDone()).isTrue();
        int afterStop = calls.get();
        Deadline.poll("the executor to end", TIMEOUT, starter::isDone);
        assertThat(calls.get()).isLessThanOrEqualTo(afterStop + 1); // at most the attempt that was running
    }

    @Test
    void startsTheRingNodeOnceItsPortIsReleased() throws Exception {
        AtomicReference<RingNode> started = new AtomicReference<>();
        ServerSocket holder = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
        int port = holder.getLocalPort();
        StorageNodeStarter starter = StorageNodeStarter.begin(
                () -> {
                    started.set(RingNode.start(TestingRing.testConfig().withPortAndStore(port, tempDir.resolve("store"))));
                    return null;
                }, Duration.ofMillis(20), Duration.ofMillis(100));
        try {
            Deadline.poll("a start that fails on the held port", TIMEOUT, () -> starter.attempts() >= 2);
            assertThat(started.get()).isNull();

            holder.close();

            Deadline.poll("the node to start on port " + port, TIMEOUT, starter::isDone,
                    () -> starter.attempts() + " attempts");
            assertThat(started.get()).isNotNull();
            assertThat(started.get().self().port()).isEqualTo(port);
            assertThat(started.get().isRunning()).isTrue();
        } finally {
            starter.stop();
            holder.close();
            if (started.get() != null) {
                started.get().close();
            }
        }
    }
}
