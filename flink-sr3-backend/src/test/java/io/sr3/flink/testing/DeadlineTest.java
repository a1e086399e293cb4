package io.sr3.flink.testing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DeadlineTest {

    @Test
    void returnsOnceTheConditionHolds() {
        AtomicInteger checks = new AtomicInteger();
        Deadline.poll("the third check", Duration.ofSeconds(10), () -> checks.incrementAndGet() >= 3);
        assertThat(checks).hasValue(3);
    }

    @Test
    void failsNamingWhatWasAwaitedAndTheLastState() {
        assertThatThrownBy(() -> Deadline.poll("a miracle", Duration.ofMillis(50), () -> false, () -> "none seen"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("Timed out after PT0.05S waiting for a miracle; last state: none seen");
    }

    @Test
    void aConditionThatThrowsEndsTheWait() {
        assertThatThrownBy(() -> Deadline.poll("a job that failed", Duration.ofSeconds(10), () -> {
            throw new IllegalStateException("the job failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("the job failed");
    }

    @Test
    void waitsShareOneDeadline() {
        Deadline deadline = Deadline.in(Duration.ofMillis(100));
        deadline.poll("the first wait", () -> true, () -> "");
        Deadline.poll("the deadline to pass", Duration.ofSeconds(10), deadline::isOverdue);
        assertThatThrownBy(() -> deadline.poll("the second wait", () -> false, () -> ""))
                .isInstanceOf(AssertionError.class).hasMessageContaining("the second wait");
    }
}
