package io.sr3.flink.node;

/** What a ring node does for the ring ({@code sr3.ring.role}). */
public enum RingRole {
    /** Holds replicas: a member of placement (TaskManagers). */
    STORAGE,
    /**
     * Reads and writes through the ring but never holds a replica and never becomes a member
     * (the JobManager, clients): its loss costs the ring nothing.
     */
    CLIENT
}
