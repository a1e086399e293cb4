package io.sr3.flink.transport;

import javax.annotation.concurrent.NotThreadSafe;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;

/**
 * The authenticated encryption of one direction of a connection authenticated with a shared
 * secret: AES-256-GCM under the direction's session key, the frame's sequence number (counted
 * from 0 in that direction, never sent) as the nonce, the frame header as additional data.
 *
 * <pre>
 *   header[22] (checksum field 0) | AES-GCM(payload | crc32c[4]) | tag[16]
 * </pre>
 *
 * <p>A frame that was injected, altered, replayed, reordered or dropped fails the next check and
 * the connection closes; the payload and its checksum (the writer's CRC32C, still verified where
 * the block lands) cannot be read on the wire. The header (type, request id, length) is readable
 * but authenticated. Each session key is new for every connection, so a nonce never repeats
 * under one key. With the JDK's AES and carry-less multiplication intrinsics an AES-GCM pass
 * costs less than the HMAC-SHA256 pass it replaces on each side: the sender encrypts into the
 * buffers the socket takes, the receiver decrypts in place in the buffer the frame was copied
 * into.
 *
 * <p>Used by one channel's encoder or decoder, on its event loop.
 */
@NotThreadSafe
final class FrameSeal {

    static final int TAG_SIZE = 16;

    /** Bytes a sealed frame carries beyond its header and payload: the encrypted checksum and the tag. */
    static final int OVERHEAD = Integer.BYTES + TAG_SIZE;

    private static final String TRANSFORMATION = "AES/GCM/NoPadding";

    private final Cipher cipher;
    private final SecretKeySpec key;
    private long sequence;

    /** @param key the direction's 32-byte session key */
    FrameSeal(byte[] key) {
        if (key.length != 32) {
            throw new IllegalArgumentException("A session key has 32 bytes, this one " + key.length);
        }
        this.key = new SecretKeySpec(key, "AES");
        try {
            this.cipher = Cipher.getInstance(TRANSFORMATION);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(TRANSFORMATION + " is not available in this JVM", e);
        }
    }

    /**
     * Starts sealing the next frame: the returned cipher takes the payload and then, in {@code
     * doFinal}, its checksum ({@link #crcBytes}), and emits the ciphertext and the tag.
     *
     * @param header the frame's header, between position and limit (not consumed)
     */
    Cipher sealNext(ByteBuffer header) {
        Cipher c = init(Cipher.ENCRYPT_MODE);
        c.updateAAD(header.duplicate());
        return c;
    }

    /**
     * Opens the next frame in place: {@code sealed} holds, between its position and limit, a
     * payload of {@code sealed.remaining() - OVERHEAD} bytes sealed as above; afterwards its
     * first {@code remaining() - OVERHEAD} bytes are the payload. Consumes the frame's sequence
     * number whether it opens or not.
     *
     * @return the payload's checksum as the sender sealed it
     * @throws AEADBadTagException if the frame was not sealed by the peer's key for this place
     *     in the stream
     */
    int openNext(ByteBuffer header, ByteBuffer sealed) throws AEADBadTagException {
        if (sealed.remaining() < OVERHEAD) {
            sequence++;
            throw new AEADBadTagException("a sealed frame carries at least " + OVERHEAD + " bytes, this one "
                    + sealed.remaining());
        }
        Cipher c = init(Cipher.DECRYPT_MODE);
        c.updateAAD(header.duplicate());
        try {
            c.doFinal(sealed.duplicate(), sealed.duplicate());
        } catch (AEADBadTagException e) {
            throw e;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Could not open a sealed frame", e);
        }
        return sealed.getInt(sealed.limit() - OVERHEAD);
    }

    /** A frame's checksum as the last bytes to seal. */
    static ByteBuffer crcBytes(int crc32c) {
        return ByteBuffer.allocate(Integer.BYTES).putInt(0, crc32c);
    }

    private Cipher init(int mode) {
        byte[] nonce = new byte[12];
        long value = sequence++;
        for (int i = 11; i >= 4; i--) {
            nonce[i] = (byte) value;
            value >>>= 8;
        }
        try {
            cipher.init(mode, key, new GCMParameterSpec(TAG_SIZE * 8, nonce));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Could not start " + TRANSFORMATION, e);
        }
        return cipher;
    }
}
