package io.sr3.flink.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The allocator of every sr3 channel's own buffers (socket reads, frame headers, TLS records):
 * Netty's pooled allocator, whose arenas keep their direct chunks. Netty's default (adaptive)
 * allocator releases and creates chunks again as the receive buffers of a 4 MiB frame, all held
 * until the frame is complete, come and go; every new chunk is zeroed and faulted in, which cost
 * a receiving event loop about 30% of its CPU samples here (docs/benchmarks.md, "Where the time goes").
 */
final class ChannelBuffers {

    static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private ChannelBuffers() {}
}
