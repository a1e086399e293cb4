package io.sr3.flink.harness;

import java.util.Collection;
import java.util.Iterator;
import java.util.Map;

/**
 * A small JSON writer for result files: maps (keys in their iteration order), collections,
 * arrays of long/double, strings, numbers, booleans and null. Non-finite doubles become null.
 */
public final class Json {

    private Json() {}

    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, 0);
        out.append('\n');
        return out.toString();
    }

    private static void write(Object value, StringBuilder out, int indent) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(s, out);
        } else if (value instanceof Double d) {
            out.append(Double.isFinite(d) ? trim(d) : "null");
        } else if (value instanceof Float f) {
            write(f.doubleValue(), out, indent);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            if (map.isEmpty()) {
                out.append("{}");
                return;
            }
            out.append("{\n");
            Iterator<? extends Map.Entry<?, ?>> it = map.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> e = it.next();
                pad(out, indent + 1);
                string(String.valueOf(e.getKey()), out);
                out.append(": ");
                write(e.getValue(), out, indent + 1);
                out.append(it.hasNext() ? ",\n" : "\n");
            }
            pad(out, indent);
            out.append('}');
        } else if (value instanceof Collection<?> list) {
            if (list.isEmpty()) {
                out.append("[]");
                return;
            }
            boolean flat = list.stream().allMatch(v -> v == null || v instanceof Number || v instanceof Boolean);
            out.append(flat ? "[" : "[\n");
            Iterator<?> it = list.iterator();
            while (it.hasNext()) {
                if (!flat) {
                    pad(out, indent + 1);
                }
                write(it.next(), out, indent + 1);
                if (it.hasNext()) {
                    out.append(flat ? ", " : ",\n");
                }
            }
            if (!flat) {
                out.append('\n');
                pad(out, indent);
            }
            out.append(']');
        } else if (value instanceof long[] longs) {
            write(java.util.Arrays.stream(longs).boxed().toList(), out, indent);
        } else if (value instanceof double[] doubles) {
            write(java.util.Arrays.stream(doubles).boxed().toList(), out, indent);
        } else {
            string(value.toString(), out);
        }
    }

    /** Four decimals at most, without trailing zeros; never a bare "1." (1.00001 rounds to "1"). */
    private static String trim(double d) {
        double rounded = Math.round(d * 1e4) / 1e4;
        if (rounded == Math.rint(rounded) && Math.abs(rounded) < 1e15) {
            return Long.toString((long) rounded);
        }
        return String.format(java.util.Locale.ROOT, "%.4f", rounded).replaceAll("0+$", "");
    }

    private static void pad(StringBuilder out, int indent) {
        out.append("  ".repeat(indent));
    }

    private static void string(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
