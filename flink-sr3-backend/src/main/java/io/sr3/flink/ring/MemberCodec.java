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

    public static Member decode(byte[] bytes) {
        return read(ByteBuffer.wrap(bytes));
    }

    public static List<Member> decodeList(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        int count = buffer.getInt();
        if (count < 0 || count > bytes.length) {
            throw new IllegalArgumentException("Member list claims " + count + " members in " + bytes.length + " bytes");
        }
        List<Member> members = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            members.add(read(buffer));
        }
        return members;
    }

    private static Member read(ByteBuffer buffer) {
        String nodeId = readString(buffer);
        String host = readString(buffer);
        int port = buffer.getInt();
        String zone = readString(buffer);
        return new Member(nodeId, host, port, zone);
    }

    /** A u16-length-prefixed string, its length checked against the bytes left before anything is allocated. */
    private static String readString(ByteBuffer buffer) {
        int length = buffer.getShort() & 0xFFFF;
        if (length > buffer.remaining()) {
            throw new IllegalArgumentException("Member record claims a " + length + "-byte field with "
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
