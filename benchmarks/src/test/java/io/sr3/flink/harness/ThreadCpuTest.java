package io.sr3.flink.harness;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

class ThreadCpuTest {

    @Test
    void parsesUserAndSystemTicksAfterANameWithSpacesAndParentheses() {
        String stat = "4242 (keyed-state (1/) S 1 1 1 0 -1 1077936192 10 0 0 0 250 37 0 0 20 0 1 0 100 0 0";

        assertThat(ThreadCpu.parseStat(stat)).contains(new ThreadCpu.Sample("keyed-state (1/", 287));
    }

    @Test
    void refusesAStatLineWithoutItsFields() {
        assertThat(ThreadCpu.parseStat("4242 (name) S 1 1")).isEmpty();
        assertThat(ThreadCpu.parseStat("garbage")).isEmpty();
    }

    @Test
    void groupsThreadsByWhatTheyDo() {
        assertThat(ThreadCpu.groupOf("keyed-state (1/")).startsWith("Flink task threads");
        assertThat(ThreadCpu.groupOf("keyed-state -> ")).startsWith("Flink task threads");
        assertThat(ThreadCpu.groupOf("Source: sr3-tes")).startsWith("Flink task threads");
        assertThat(ThreadCpu.groupOf("Flink-RocksDBSt")).startsWith("Flink asynchronous checkpoint part");
        assertThat(ThreadCpu.groupOf("Flink Netty Ser")).startsWith("Flink runtime");
        assertThat(ThreadCpu.groupOf("rocksdb:low")).startsWith("RocksDB");
        assertThat(ThreadCpu.groupOf("GC Thread#1")).isEqualTo("garbage collector");
        assertThat(ThreadCpu.groupOf("G1 Conc#0")).isEqualTo("garbage collector");
        assertThat(ThreadCpu.groupOf("C2 CompilerThre")).isEqualTo("JIT compiler");
        assertThat(ThreadCpu.groupOf("sr3-netty-1-2")).startsWith("flink-sr3 ring");
        // the NameNode's and DataNodes' own threads, as /proc names them (15 characters at most)
        for (String hdfs : List.of("IPC Server hand", "DataXceiver for", "Async disk work", "FSEditLogAsync",
                "MarkedDeleteBlo")) {
            assertThat(ThreadCpu.groupOf(hdfs)).as(hdfs).startsWith("HDFS");
        }
        assertThat(ThreadCpu.groupOf("main")).isEqualTo("other");
    }

    @Test
    void countsTheCpuOfABusyThreadInItsGroupAndOfAnEndedThreadAsEnded() throws Exception {
        ThreadCpu.Snapshot before = ThreadCpu.snapshot();
        CountDownLatch spun = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread busy = new Thread(() -> {
            spin(300);
            spun.countDown();
            awaitQuietly(release); // alive, so the next snapshot sees it
        }, "sr3-busy-test");
        busy.start();
        spun.await();
        ThreadCpu.Snapshot whileBusy = ThreadCpu.snapshot();
        release.countDown();
        busy.join();
        Thread ended = new Thread(() -> spin(300), "ended-test");
        ended.start();
        ended.join();
        ThreadCpu.Snapshot after = ThreadCpu.snapshot();

        Map<String, Double> first = ThreadCpu.secondsByGroup(before, whileBusy);
        assertThat(first.get("flink-sr3 ring (transport, store, requests)")).isGreaterThan(0.1);
        Map<String, Double> second = ThreadCpu.secondsByGroup(whileBusy, after);
        assertThat(second.get(ThreadCpu.ENDED)).isGreaterThan(0.1);
        assertThat(ThreadCpu.secondsByName(before, whileBusy)).containsKey("sr#-busy-test");
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Burns {@code millis} of this thread's own CPU time (at most 20 s of wall time on a starved machine). */
    private static void spin(long millis) {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long cpuEnd = threads.getCurrentThreadCpuTime() + millis * 1_000_000;
        long wallEnd = System.nanoTime() + 20_000_000_000L;
        long x = 0;
        while (threads.getCurrentThreadCpuTime() < cpuEnd && System.nanoTime() < wallEnd) {
            for (int i = 0; i < 10_000; i++) {
                x += Long.numberOfTrailingZeros(x + i);
            }
        }
        if (x == 42) {
            System.out.print("");
        }
    }
}
