package io.sr3.flink.deploy;

import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * One Kubernetes object read from a manifest file, navigated by paths like
 * {@code "spec.template.spec"}; a missing path fails with the object and the path it lacks.
 */
record Manifest(Path file, Map<String, Object> object) {

    /** Every object of every {@code *.yaml} file in {@code directory}, in file order. */
    static List<Manifest> loadAll(Path directory) throws IOException {
        List<Manifest> manifests = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                for (Object document : new Load(LoadSettings.builder().build()).loadAllFromString(Files.readString(file))) {
                    if (document != null) {
                        manifests.add(new Manifest(file, asMap(document, file + ": a document")));
                    }
                }
            }
        }
        if (manifests.isEmpty()) {
            throw new IllegalStateException("No Kubernetes objects in " + directory.toAbsolutePath());
        }
        return manifests;
    }

    /** The one object of this kind and name among {@code manifests}. */
    static Manifest find(List<Manifest> manifests, String kind, String name) {
        List<Manifest> found = manifests.stream().filter(m -> m.kind().equals(kind) && m.name().equals(name)).toList();
        if (found.size() != 1) {
            throw new AssertionError("Expected one " + kind + " '" + name + "', found " + found.size() + " in "
                    + manifests.stream().map(Manifest::toString).toList());
        }
        return found.get(0);
    }

    /** The objects of this kind. */
    static List<Manifest> ofKind(List<Manifest> manifests, String kind) {
        return manifests.stream().filter(m -> m.kind().equals(kind)).toList();
    }

    String kind() {
        return string(object, "kind");
    }

    String name() {
        return string(map("metadata"), "name");
    }

    Map<String, Object> map(String path) {
        return asMap(get(object, path), this + " " + path);
    }

    List<Map<String, Object>> list(String path) {
        return asList(get(object, path), this + " " + path);
    }

    @Override
    public String toString() {
        return object.get("kind") + " '" + ((Map<?, ?>) object.getOrDefault("metadata", Map.of())).get("name") + "' ("
                + file.getFileName() + ")";
    }

    /** The value at a dotted path below {@code from}; fails naming the path when a step is missing. */
    static Object get(Map<String, Object> from, String path) {
        Object current = from;
        for (String step : path.split("\\.")) {
            if (!(current instanceof Map<?, ?> map) || !map.containsKey(step)) {
                throw new AssertionError("No '" + step + "' (of '" + path + "') in " + from);
            }
            current = map.get(step);
        }
        return current;
    }

    static String string(Map<String, Object> from, String path) {
        Object value = get(from, path);
        if (!(value instanceof String s)) {
            throw new AssertionError("'" + path + "' must be a string, is " + value);
        }
        return s;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object value, String what) {
        if (!(value instanceof Map<?, ?>)) {
            throw new AssertionError(what + " must be a map, is " + value);
        }
        return (Map<String, Object>) value;
    }

    static List<Map<String, Object>> asList(Object value, String what) {
        if (!(value instanceof List<?> list)) {
            throw new AssertionError(what + " must be a list, is " + value);
        }
        return list.stream().map(e -> asMap(e, what + " entry")).toList();
    }

    /** The entry of {@code list} whose {@code name} is {@code name}. */
    static Map<String, Object> named(List<Map<String, Object>> list, String name) {
        return list.stream().filter(e -> Objects.equals(e.get("name"), name)).findFirst()
                .orElseThrow(() -> new AssertionError("No entry named '" + name + "' in " + list));
    }
}
