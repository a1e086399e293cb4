package io.sr3.flink.testjob;

/**
 * One input record of {@link StatefulTestJob}, derived from its index alone by
 * {@link StatefulTestJob#event}.
 *
 * @param index position in the input, also the event time in milliseconds
 * @param key {@code index % keys}
 * @param value a small pseudo-random number summed per key
 * @param payload pseudo-random bytes folded into the key's MapState
 */
public record Event(long index, int key, long value, byte[] payload) {}
