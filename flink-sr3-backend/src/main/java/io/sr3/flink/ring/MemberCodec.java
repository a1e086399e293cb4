package io.sr3.flink.ring;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Binary form of member records, carried by PING requests and their answers.
 *
 * <pre>
 * member list:  count i32 | member*
 * member:       nodeIdLength u16 | nodeId utf8 | hostLength u16 | host utf8 | port i32
 *               | zoneLength u16 | zone utf8
 * </pre>
 */
public final class MemberCodec {

    /** The fewest bytes one member record takes: three empty length-prefixed strings and a port. */
    static final int MIN_RECORD_BYTES = 2 + 2 + 4 + 2;

    private MemberCodec() {}

    public static byte[] encode(Member member) {
        return encode(List.of(member), false);
    }

    public static byte[] encodeList(Collection<Member> members) {
        return encode(members, true);
    }

    private static byte[] encode(Collection<Member> members, boolean withCount) {
        int size = withCount ? 4 : 0;
        for (Member m : members) {
            size += 2 + utf8(m.nodeId()).length + 2 + utf8(m.host()).length + 4 + 2 + utf8(m.zone()).length;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        if (withCount) {
            buffer.putInt(members.size());
        }
        for (Member m : members) {
            byte[] nodeId = utf8(m.nodeId());
            byte[] host = utf8(m.host());
            byte[] zone = utf8(m.zone());
            buffer.putShort((short) nodeId.length).put(nodeId);
            buffer.putShort((short) host.length).put(host).putInt(m.port()).putShort((short) zone.length).put(zone);
        }
        return buffer.array();
    }

    /**
     * Decodes one member record (a PING's payload).
     *
     * @throws IllegalArgumentException if the bytes are truncated, a length field claims more
     *     bytes than remain, bytes trail the record, or the record is not a valid {@link Member}
     */
    public static Member decode(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        Member member = read(buffer);
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("Member record has " + buffer.remaining() + " trailing bytes");
        }
        return member;
    }

    /**
     * Decodes a member list (a PING's answer). The count is checked against the bytes that remain
     * before anything is allocated: each record takes at least {@link #MIN_RECORD_BYTES}.
     *
     * @throws IllegalArgumentException naming the field, the value it claims and the bytes left,
     *     if the list is truncated or claims more than its bytes can hold
     */
    public static List<Member> decodeList(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        int count = readInt(buffer, "member count");
        if (count < 0 || (long) count * MIN_RECORD_BYTES > buffer.remaining()) {
            throw new IllegalArgumentException("Member list: member count " + count + " does not fit the "
                    + buffer.remaining() + " bytes left (each member takes at least " + MIN_RECORD_BYTES + ")");
        }
        List<Member> members = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            members.add(read(buffer));
        }
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("Member list of " + count + " members has " + buffer.remaining()
                    + " trailing bytes");
        }
        return members;
    }

    private static Member read(ByteBuffer buffer) {
        String nodeId = readString(buffer, "node id");
        String host = readString(buffer, "host");
        int port = readInt(buffer, "port");
        String zone = readString(buffer, "zone");
        return new Member(nodeId, host, port, zone);
    }

    private static int readInt(ByteBuffer buffer, String field) {
        if (buffer.remaining() < 4) {
            throw new IllegalArgumentException("Member record: the 4-byte " + field + " is truncated, "
                    + buffer.remaining() + " bytes left");
        }
        return buffer.getInt();
    }

    /** A u16-length-prefixed string, its length checked against the bytes left before anything is allocated. */
    private static String readString(ByteBuffer buffer, String field) {
        if (buffer.remaining() < 2) {
            throw new IllegalArgumentException("Member record: the " + field + " length is truncated, "
                    + buffer.remaining() + " bytes left");
        }
        int length = buffer.getShort() & 0xFFFF;
        if (length > buffer.remaining()) {
            throw new IllegalArgumentException("Member record: " + field + " length " + length + " exceeds the "
                    + buffer.remaining() + " bytes left");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
