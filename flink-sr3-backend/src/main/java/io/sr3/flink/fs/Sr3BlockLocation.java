package io.sr3.flink.fs;

import io.sr3.flink.ring.Member;
import org.apache.flink.core.fs.BlockLocation;

/** Where one block of a file lives, for {@link Sr3FileSystem#getFileBlockLocations}: the hosts of its holders. */
record Sr3BlockLocation(Manifest.BlockRef block, long offset) implements BlockLocation {
    @Override
    public String[] getHosts() {
        return block.holders().stream().map(Member::host).distinct().toArray(String[]::new);
    }

    @Override
    public long getOffset() {
        return offset;
    }

    @Override
    public long getLength() {
        return block.length();
    }

    @Override
    public int compareTo(BlockLocation other) {
        return Long.compare(offset, other.getOffset());
    }
}
