/**
 * A deterministic stateful job whose exact result is known in advance: {@link
 * io.sr3.flink.testjob.StatefulTestJob} (job and expected results), {@link
 * io.sr3.flink.testjob.TestJobSpec} (its parameters), {@link io.sr3.flink.testjob.RunRegistry}
 * (what a run in this JVM reported: results, emissions, restores, injected failure).
 */
package io.sr3.flink.testjob;
