package io.sr3.flink.node;

import io.sr3.flink.transport.MeasuredLink;
import io.sr3.flink.transport.MessageType;

import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What a node sees of its links, for the layer above that models the network (the restore
 * planner's view) without the node knowing it: every ping's round trip, every block read from or
 * sent to a peer, and the links the node reports when a peer asks ({@link MessageType#LINKS}).
 * Listeners run on the network thread that completed the exchange, so they must not block.
 */
@ThreadSafe
public final class LinkObservations {

    private final List<BiConsumer<String, Duration>> roundTripListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<Transfer>> transferListeners = new CopyOnWriteArrayList<>();
    private volatile Supplier<List<MeasuredLink>> report = List::of;

    /** Calls {@code listener} with (peer id, round trip) for every ping a peer answers. */
    public void onRoundTrip(BiConsumer<String, Duration> listener) {
        roundTripListeners.add(listener);
    }

    /**
     * Calls {@code listener} for every block this node reads from another node (repair, reads,
     * relays, restores) or sends to one (checkpoint writes, re-replication).
     */
    public void onTransfer(Consumer<Transfer> listener) {
        transferListeners.add(listener);
    }

    /** Sets what this node answers to {@link MessageType#LINKS}; until set, nothing measured. */
    public void reportFrom(Supplier<List<MeasuredLink>> source) {
        this.report = source;
    }

    /** The links this node measured, as answered to {@link MessageType#LINKS}. */
    public List<MeasuredLink> report() {
        return report.get();
    }

    void roundTrip(String peer, Duration roundTrip) {
        for (BiConsumer<String, Duration> listener : roundTripListeners) {
            listener.accept(peer, roundTrip);
        }
    }

    void transfer(Transfer transfer) {
        for (Consumer<Transfer> listener : transferListeners) {
            listener.accept(transfer);
        }
    }
}
