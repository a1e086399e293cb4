package io.sr3.flink.fs;

import io.sr3.flink.ring.Member;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the ring stores about one file or directory: its path, length and blocks, and for each
 * block its size, checksum and the nodes that acknowledged it.
 *
 * <p>Stored layout (big-endian; written into the block store like any blob):
 *
 * <pre>
 * magic "SR3M" i32 | version u8 | kind u8 (0 file, 1 directory) | modified i64 | length i64
 * | pathLength u16 | path utf8 | blockCount i32 | block*
 * block: keyLength u16 | key utf8 | length i32 | crc32c i32 | holderCount u8 | (idLength u16 | id utf8)*
 * </pre>
 */
record Manifest(String path, boolean directory, long modificationTime, long length, List<BlockRef> blocks) {

    static final int MAGIC = 0x5352334D; // "SR3M"
    static final byte VERSION = 1;

    Manifest {
        Objects.requireNonNull(path, "path");
        blocks = List.copyOf(blocks);
        long sum = 0;
        for (BlockRef block : blocks) {
            sum += block.length();
        }
        if (sum != length) {
            throw new IllegalArgumentException("Manifest of " + path + " says " + length + " bytes but its blocks hold " + sum);
        }
        if (directory && !blocks.isEmpty()) {
            throw new IllegalArgumentException("Directory manifest " + path + " cannot have blocks");
        }
    }

    static Manifest directory(String path, long modificationTime) {
        return new Manifest(path, true, modificationTime, 0, List.of());
    }

    Manifest withPath(String newPath) {
        return new Manifest(newPath, directory, modificationTime, length, blocks);
    }

    /** One block of a file. */
    record BlockRef(String key, int length, int crc32c, List<Member> holders) {
        BlockRef {
            Objects.requireNonNull(key, "key");
            holders = List.copyOf(holders);
            if (length < 0) {
                throw new IllegalArgumentException("Block length must be >= 0, was " + length);
            }
        }
    }

    byte[] encode() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + blocks.size() * 96);
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(MAGIC);
            out.writeByte(VERSION);
            out.writeByte(directory ? 1 : 0);
            out.writeLong(modificationTime);
            out.writeLong(length);
            out.writeUTF(path);
            out.writeInt(blocks.size());
            for (BlockRef block : blocks) {
                out.writeUTF(block.key());
                out.writeInt(block.length());
                out.writeInt(block.crc32c());
                out.writeByte(block.holders().size());
                for (Member holder : block.holders()) {
                    out.writeUTF(holder.id());
                }
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Decodes a manifest, rejecting anything that is not one. */
    static Manifest decode(byte[] encoded, String source) throws IOException {
        try {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(encoded));
            int magic = in.readInt();
            byte version = in.readByte();
            if (magic != MAGIC || version != VERSION) {
                throw new IOException(String.format("Not an sr3 manifest (magic 0x%08x, version %d) from %s", magic, version, source));
            }
            boolean directory = in.readByte() == 1;
            long modified = in.readLong();
            long length = in.readLong();
            String path = in.readUTF();
            int count = in.readInt();
            if (count < 0 || count > encoded.length) {
                throw new IOException("Manifest from " + source + " claims " + count + " blocks");
            }
            List<BlockRef> blocks = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String key = in.readUTF();
                int blockLength = in.readInt();
                int crc = in.readInt();
                int holderCount = in.readUnsignedByte();
                List<Member> holders = new ArrayList<>(holderCount);
                for (int h = 0; h < holderCount; h++) {
                    holders.add(Member.fromId(in.readUTF()));
                }
                blocks.add(new BlockRef(key, blockLength, crc, holders));
            }
            return new Manifest(path, directory, modified, length, blocks);
        } catch (java.io.EOFException | IllegalArgumentException e) {
            throw new IOException("Malformed sr3 manifest from " + source + ": " + e.getMessage(), e);
        }
    }
}
