package io.sr3.flink.transport;

import javax.crypto.AEADBadTagException;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.zip.CRC32C;

/** Sealed frames as bytes, written and read the way {@link FrameEncoder} and {@link FrameDecoder} do, for tests that speak the wire format themselves. */
final class SealedFrames {

    private SealedFrames() {}

    /** A clear frame: header (with the payload's CRC32C) and payload. */
    static byte[] clear(MessageType type, long requestId, byte[] payload) {
        return ByteBuffer.allocate(Frame.HEADER_SIZE + payload.length).put(header(type, requestId, payload.length,
                crc(payload))).put(payload).array();
    }

    /** The next frame {@code seal} seals: header (checksum field 0), sealed payload and checksum, tag. */
    static byte[] sealed(FrameSeal seal, MessageType type, long requestId, byte[] payload) {
        byte[] header = header(type, requestId, payload.length, 0);
        byte[] plain = ByteBuffer.allocate(payload.length + Integer.BYTES).put(payload).putInt(crc(payload)).array();
        byte[] sealed;
        try {
            sealed = seal.sealNext(ByteBuffer.wrap(header)).doFinal(plain);
        } catch (GeneralSecurityException e) {
            throw new AssertionError("Could not seal a frame", e);
        }
        return ByteBuffer.allocate(header.length + sealed.length).put(header).put(sealed).array();
    }

    /**
     * Opens the next frame {@code seal} expects: {@code sealed} is what followed {@code header}.
     *
     * @return the payload, its checksum verified
     * @throws AEADBadTagException if it was not sealed for this place in the stream
     */
    static byte[] open(FrameSeal seal, byte[] header, byte[] sealed) throws AEADBadTagException {
        ByteBuffer buffer = ByteBuffer.wrap(sealed.clone());
        int crc = seal.openNext(ByteBuffer.wrap(header), buffer);
        byte[] payload = Arrays.copyOf(buffer.array(), sealed.length - FrameSeal.OVERHEAD);
        if (crc(payload) != crc) {
            throw new AssertionError("A sealed frame's payload does not match its sealed CRC32C");
        }
        return payload;
    }

    static byte[] header(MessageType type, long requestId, int length, int crc) {
        return ByteBuffer.allocate(Frame.HEADER_SIZE).putInt(Frame.MAGIC).put(Frame.VERSION).put((byte) type.code())
                .putLong(requestId).putInt(length).putInt(crc).array();
    }

    static int crc(byte[] payload) {
        CRC32C crc = new CRC32C();
        crc.update(payload);
        return (int) crc.getValue();
    }
}
