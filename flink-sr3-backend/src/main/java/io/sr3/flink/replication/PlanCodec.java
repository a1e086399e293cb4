package io.sr3.flink.replication;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The wire layout of a {@link ReplicationPlan}, which TaskManagers read from the network. Every
 * field the plan holds is written, so that a decoded plan equals the encoded one.
 *
 * <pre>
 * magic "SR3P" i32 | version u8 | defaultCopies u8 | choiceCount i32 | choice*
 * choice: vertexId str | name str | copies u8 | zones u8 | reason str
 *       | parallelism i32 | stateBytes i64 | inputRecordsPerSecond f64 | capacityRecordsPerSecond f64
 *       | failoverRegionSubtasks i32 | restoreSeconds f64 | replaySeconds f64 | stalledSubtaskSeconds f64
 * str: byteLength i32 | utf8
 * </pre>
 *
 * Big-endian. Decoding checks every length against the bytes left before allocating and rejects
 * trailing bytes, so a damaged or hostile plan costs no more memory than its own bytes.
 */
final class PlanCodec {

    static final int MAGIC = 0x53523350; // "SR3P"
    static final byte VERSION = 1;
    /** The oldest layout this build still reads. */
    static final byte LOWEST_COMPATIBLE_VERSION = 1;
    private static final int HEADER_BYTES = 4 + 1 + 1 + 4;
    /** The fewest bytes one choice takes: empty strings and the fixed fields. */
    private static final int MIN_CHOICE_BYTES = 3 * 4 + 1 + 1 + 4 + 8 + 8 + 8 + 4 + 8 + 8 + 8;

    private PlanCodec() {}

    static byte[] encode(ReplicationPlan plan) {
        List<byte[]> strings = new ArrayList<>();
        int size = HEADER_BYTES;
        for (ReplicaChoice c : plan.choices()) {
            for (String s : List.of(c.vertexId(), c.name(), c.reason())) {
                byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
                strings.add(utf8);
                size = Math.addExact(size, utf8.length);
            }
            size = Math.addExact(size, MIN_CHOICE_BYTES);
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        out.putInt(MAGIC).put(VERSION).put((byte) plan.defaultCopies()).putInt(plan.choices().size());
        int s = 0;
        for (ReplicaChoice c : plan.choices()) {
            OperatorCost cost = c.cost();
            OperatorProfile op = cost.operator();
            putString(out, strings.get(s++));
            putString(out, strings.get(s++));
            out.put((byte) c.copies()).put((byte) c.zones());
            putString(out, strings.get(s++));
            out.putInt(op.parallelism()).putLong(op.stateBytes()).putDouble(op.inputRecordsPerSecond())
                    .putDouble(op.capacityRecordsPerSecond()).putInt(op.failoverRegionSubtasks())
                    .putDouble(cost.restoreSeconds()).putDouble(cost.replaySeconds())
                    .putDouble(cost.stalledSubtaskSeconds());
        }
        return out.array();
    }

    static ReplicationPlan decode(byte[] bytes) throws IOException {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        String field = "magic";
        try {
            int magic = in.getInt();
            if (magic != MAGIC) {
                throw new IOException(String.format("Not an sr3 replication plan: magic 0x%08x, expected 0x%08x "
                        + "(\"SR3P\"), in %d bytes", magic, MAGIC, bytes.length));
            }
            field = "version";
            int version = Byte.toUnsignedInt(in.get());
            if (version < LOWEST_COMPATIBLE_VERSION || version > VERSION) {
                throw new IOException(String.format("Unsupported sr3 replication plan version %d: this build reads "
                        + "versions %d to %d (is the JobManager running another flink-sr3 version?)", version,
                        LOWEST_COMPATIBLE_VERSION, VERSION));
            }
            field = "default copies";
            int defaultCopies = Byte.toUnsignedInt(in.get());
            field = "choice count";
            int count = in.getInt();
            if (count < 0 || (long) count * MIN_CHOICE_BYTES > in.remaining()) {
                throw malformed(in, bytes, String.format("choice count %d needs at least %d bytes, %d left", count,
                        (long) count * MIN_CHOICE_BYTES, in.remaining()));
            }
            List<ReplicaChoice> choices = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                field = "choice " + i;
                String vertexId = getString(in, bytes, "vertex id of choice " + i);
                String name = getString(in, bytes, "name of choice " + i);
                int copies = Byte.toUnsignedInt(in.get());
                int zones = Byte.toUnsignedInt(in.get());
                String reason = getString(in, bytes, "reason of choice " + i);
                OperatorProfile op = new OperatorProfile(vertexId, name, in.getInt(), in.getLong(), in.getDouble(),
                        in.getDouble(), in.getInt());
                OperatorCost cost = new OperatorCost(op, in.getDouble(), in.getDouble(), in.getDouble());
                choices.add(new ReplicaChoice(vertexId, name, copies, zones, cost, reason));
            }
            if (in.hasRemaining()) {
                throw malformed(in, bytes, in.remaining() + " trailing bytes after " + count + " choices");
            }
            return ReplicationPlan.of(defaultCopies, choices);
        } catch (BufferUnderflowException e) {
            throw new IOException(String.format("Truncated sr3 replication plan: %d bytes end inside the %s "
                    + "(at byte %d)", bytes.length, field, in.position()), e);
        } catch (IllegalArgumentException e) {
            throw new IOException("Invalid sr3 replication plan at byte " + in.position() + " of " + bytes.length
                    + ": " + e.getMessage(), e);
        }
    }

    private static void putString(ByteBuffer out, byte[] utf8) {
        out.putInt(utf8.length).put(utf8);
    }

    private static String getString(ByteBuffer in, byte[] bytes, String field) throws IOException {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw malformed(in, bytes, String.format("%s claims %d bytes, %d left", field, length, in.remaining()));
        }
        ByteBuffer utf8 = in.slice(in.position(), length);
        in.position(in.position() + length);
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(utf8).toString();
        } catch (CharacterCodingException e) {
            throw malformed(in, bytes, field + " is not UTF-8");
        }
    }

    private static IOException malformed(ByteBuffer in, byte[] bytes, String what) {
        return new IOException("Malformed sr3 replication plan (byte " + in.position() + " of " + bytes.length + "): "
                + what);
    }
}
