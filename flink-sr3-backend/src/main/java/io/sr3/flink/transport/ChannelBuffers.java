package io.sr3.flink.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The allocator of every sr3 channel's own buffers (socket reads, frame headers, TLS records):
 * Netty's pooled allocator, whose arenas keep their direct chunks. Netty's default (adaptive)
 * allocator releases and creates chunks again as the receive buffers of a 4 MiB frame, all held
 * until the frame is complete, come and go; every new chunk is zeroed and faulted in, which cost
 * the receiving and sending event loops about 15% of their CPU time (docs/benchmarks.md).
 */
final class ChannelBuffers {

    static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private ChannelBuffers() {}
}
