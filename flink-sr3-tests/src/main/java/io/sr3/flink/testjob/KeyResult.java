package io.sr3.flink.testjob;

/**
 * What {@link StatefulTestJob} emits for one key at the end of input; equal to
 * {@link StatefulTestJob#expectedResults} exactly when every record was applied exactly once.
 *
 * @param key the key
 * @param count records of this key
 * @param sum sum of their values (folded from ListState into ValueState by event-time timers)
 * @param payloadChecksum CRC32 over the key's MapState (slot, XOR of its payloads), in slot
 *     order; a record applied twice cancels its own payload, so duplicates change it
 */
public record KeyResult(int key, long count, long sum, long payloadChecksum) {}
