package io.sr3.flink.pacing;

import java.util.OptionalDouble;

/** Where a pacer learns how fast this cluster actually restores state, in bytes/s. */
@FunctionalInterface
public interface RestoreRateSource {

    /** Nothing measured: the pacer uses {@code sr3.pacing.restore-bandwidth}. */
    RestoreRateSource CONFIGURED_ONLY = OptionalDouble::empty;

    /** The measured restore rate, or empty when no restore was measured recently. */
    OptionalDouble bytesPerSecond();
}
