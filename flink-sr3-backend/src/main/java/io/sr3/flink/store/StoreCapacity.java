package io.sr3.flink.store;

import javax.annotation.concurrent.ThreadSafe;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes a {@link BlockStore} holds against its limit ({@code sr3.store.max-size}): complete
 * blocks plus the bytes reserved by writes in progress, so that a put that would pass the limit
 * fails before anything is written.
 */
@ThreadSafe
final class StoreCapacity {

    /** Bytes of complete blocks plus bytes reserved by writes in progress. */
    private final AtomicLong bytesStored;
    private final long maxBytes;
    /** The store's directory, for the message of a {@link StoreFullException}. */
    private final Path directory;

    /** @param existing bytes of the blocks already in {@code directory} when the store opens */
    StoreCapacity(long maxBytes, Path directory, long existing) {
        this.maxBytes = maxBytes;
        this.directory = directory;
        this.bytesStored = new AtomicLong(existing);
    }

    long bytesStored() {
        return bytesStored.get();
    }

    /** Counts {@code growth} bytes as stored if they fit under the limit; shrinking always fits. */
    void reserve(String key, long growth) throws StoreFullException {
        while (true) {
            long current = bytesStored.get();
            if (growth > 0 && current + growth > maxBytes) {
                throw new StoreFullException(key, growth, current, maxBytes, directory);
            }
            if (bytesStored.compareAndSet(current, current + growth)) {
                return;
            }
        }
    }

    /** No longer counts {@code bytes}: a block deleted or quarantined, or a reservation whose write failed. */
    void release(long bytes) {
        bytesStored.addAndGet(-bytes);
    }

    /** Counts nothing: every block was deleted. */
    void clear() {
        bytesStored.set(0);
    }
}
