/**
 * Topology-aware replication (DESIGN section 5), as pure functions: {@link
 * io.sr3.flink.replication.FailoverRegions} and {@link io.sr3.flink.replication.FailureCostModel}
 * price the loss of each stateful operator's state copies, {@link
 * io.sr3.flink.replication.ReplicationPolicy} turns the prices into a {@link
 * io.sr3.flink.replication.ReplicationPlan} within a storage budget. Knows nothing of Flink; the
 * JobManager's driver gathers the inputs and ships the plan to the TaskManagers.
 */
package io.sr3.flink.replication;
