package io.sr3.flink.transport;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A link one node measured from its own transfers: what {@code from} delivered to {@code to}, in
 * bytes per second, measured {@code age} ago. Travels in the answer to {@link MessageType#LINKS}.
 *
 * <pre>
 * count i32 | (fromLength u16 | from utf8 | toLength u16 | to utf8 | bytesPerSecond f64 | ageMillis i64)*
 * </pre>
 *
 * @param from the sending node's id
 * @param to the receiving node's id
 * @param bytesPerSecond what the link carried, positive and finite
 * @param age how long ago it was last measured, as the reporting node saw it
 */
public record MeasuredLink(String from, String to, double bytesPerSecond, Duration age) {

    /** More than any ring's peers, each in two directions: a longer list is a broken or hostile answer. */
    public static final int MAX_LINKS = 8192;
    private static final int MIN_ENTRY_BYTES = 2 + 2 + 8 + 8;

    public MeasuredLink {
        Objects.requireNonNull(age, "age");
        if (from == null || from.isEmpty() || to == null || to.isEmpty()) {
            throw new IllegalArgumentException("A measured link needs both ends, was '" + from + "' -> '" + to + "'");
        }
        if (!(bytesPerSecond > 0) || Double.isInfinite(bytesPerSecond) || age.isNegative()) {
            throw new IllegalArgumentException("A measured link " + from + " -> " + to + " needs a positive, finite rate and "
                    + "an age of zero or more, was " + bytesPerSecond + " B/s, " + age);
        }
    }

    /** The wire form of {@code links}. */
    public static byte[] encode(List<MeasuredLink> links) {
        if (links.size() > MAX_LINKS) {
            throw new IllegalArgumentException("At most " + MAX_LINKS + " measured links travel in one answer, got "
                    + links.size());
        }
        List<byte[]> names = new ArrayList<>(2 * links.size());
        int size = 4;
        for (MeasuredLink link : links) {
            byte[] from = shortString(link.from);
            byte[] to = shortString(link.to);
            names.add(from);
            names.add(to);
            size += 2 + from.length + 2 + to.length + 16;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size).putInt(links.size());
        for (int i = 0; i < links.size(); i++) {
            byte[] from = names.get(2 * i);
            byte[] to = names.get(2 * i + 1);
            buffer.putShort((short) from.length).put(from).putShort((short) to.length).put(to)
                    .putDouble(links.get(i).bytesPerSecond).putLong(links.get(i).age.toMillis());
        }
        return buffer.array();
    }

    /**
     * The links of a {@link MessageType#LINKS} answer.
     *
     * @throws IllegalArgumentException naming the entry, if the payload breaks the layout or an
     *     entry is not a valid link (a zero or negative rate, a negative age)
     */
    public static List<MeasuredLink> decode(byte[] payload) {
        ByteBuffer buffer = ByteBuffer.wrap(payload);
        if (buffer.remaining() < 4) {
            throw new IllegalArgumentException("Measured links of " + payload.length + " bytes have no count");
        }
        int count = buffer.getInt();
        if (count < 0 || count > MAX_LINKS || count > buffer.remaining() / MIN_ENTRY_BYTES) {
            throw new IllegalArgumentException("Measured links claim " + count + " entries in the " + buffer.remaining()
                    + " bytes left (at most " + MAX_LINKS + ")");
        }
        List<MeasuredLink> links = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String from = Payloads.utf8(Payloads.shortPrefixed(buffer, "Measured link " + i));
            String to = Payloads.utf8(Payloads.shortPrefixed(buffer, "Measured link " + i));
            if (buffer.remaining() < 16) {
                throw new IllegalArgumentException("Measured link " + i + " (" + from + " -> " + to + ") is cut short");
            }
            double rate = buffer.getDouble();
            long ageMillis = buffer.getLong();
            links.add(new MeasuredLink(from, to, rate, Duration.ofMillis(ageMillis)));
        }
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException("Measured links end with " + buffer.remaining() + " unexpected bytes");
        }
        return links;
    }

    private static byte[] shortString(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > 0xFFFF) {
            throw new IllegalArgumentException("A node id of " + bytes.length + " bytes does not fit a measured link");
        }
        return bytes;
    }
}
