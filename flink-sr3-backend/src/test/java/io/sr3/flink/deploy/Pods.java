package io.sr3.flink.deploy;

import org.apache.flink.configuration.Configuration;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.sr3.flink.deploy.Manifest.asList;
import static io.sr3.flink.deploy.Manifest.asMap;
import static io.sr3.flink.deploy.Manifest.string;
import static org.assertj.core.api.Assertions.assertThat;

/** What a pod spec of a manifest gives its containers: environment, arguments, volumes. */
final class Pods {

    private static final Pattern KUBERNETES_VARIABLE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    private Pods() {}

    /** {@code -Dkey=value} arguments after the entrypoint's command, with {@code $(VAR)} expanded. */
    static Configuration dynamicProperties(Map<String, Object> container, String podName) {
        Map<String, String> environment = environment(container, podName);
        List<String> args = stringList(container.get("args"));
        assertThat(args.get(0)).isIn("jobmanager", "taskmanager");
        Configuration dynamic = new Configuration();
        for (String arg : args.subList(1, args.size())) {
            assertThat(arg).as("a dynamic property").matches("-D[^=]+=.*");
            Matcher variable = KUBERNETES_VARIABLE.matcher(arg);
            StringBuilder expanded = new StringBuilder();
            while (variable.find()) {
                assertThat(environment).as("$(%s) in %s is defined", variable.group(1), arg).containsKey(variable.group(1));
                variable.appendReplacement(expanded, Matcher.quoteReplacement(environment.get(variable.group(1))));
            }
            variable.appendTail(expanded);
            int equals = expanded.indexOf("=");
            dynamic.setString(expanded.substring(2, equals), expanded.substring(equals + 1));
        }
        return dynamic;
    }

    /** The container's environment as a pod named {@code podName} sees it. */
    static Map<String, String> environment(Map<String, Object> container, String podName) {
        Map<String, String> environment = new HashMap<>();
        for (Map<String, Object> variable : asList(container.getOrDefault("env", List.of()), "env")) {
            String name = (String) variable.get("name");
            if (variable.containsKey("value")) {
                environment.put(name, String.valueOf(variable.get("value")));
            } else {
                String field = string(asMap(variable.get("valueFrom"), name), "fieldRef.fieldPath");
                environment.put(name, switch (field) {
                    case "metadata.name" -> podName;
                    case "status.podIP" -> "10.1.2.3";
                    default -> throw new AssertionError("Unexpected field " + field + " for " + name);
                });
            }
        }
        return environment;
    }

    /** Variables of the container set from a Secret, with the Secret's name. */
    static Map<String, String> secretEnvironment(Map<String, Object> container) {
        Map<String, String> secrets = new HashMap<>();
        for (Map<String, Object> variable : asList(container.getOrDefault("env", List.of()), "env")) {
            Object from = variable.get("valueFrom");
            if (from instanceof Map<?, ?> map && map.containsKey("secretKeyRef")) {
                secrets.put((String) variable.get("name"), string(asMap(from, "valueFrom"), "secretKeyRef.name"));
            }
        }
        return secrets;
    }

    /** The volume mounted at the longest mount path that contains {@code path}. */
    static String volumeAt(Map<String, Object> container, String path) {
        return asList(container.get("volumeMounts"), "volumeMounts").stream()
                .filter(m -> path.equals(m.get("mountPath")) || path.startsWith(m.get("mountPath") + "/"))
                .max((a, b) -> ((String) a.get("mountPath")).length() - ((String) b.get("mountPath")).length())
                .map(m -> (String) m.get("name"))
                .orElseThrow(() -> new AssertionError("No volume mounted at " + path + " in " + container.get("name")));
    }

    /** The name of the pod's volume of this type ({@code configMap}, {@code secret}), and source name if given. */
    static String volumeOf(Map<String, Object> pod, String type, String source) {
        List<String> names = asList(pod.get("volumes"), "volumes").stream()
                .filter(v -> v.get(type) instanceof Map<?, ?> s
                        && (source == null || source.equals(s.get("name"))))
                .map(v -> (String) v.get("name")).toList();
        assertThat(names).as("%s volumes %s", type, source == null ? "" : source).hasSize(1);
        return names.get(0);
    }

    static Map<String, Object> onlyContainer(Map<String, Object> pod) {
        List<Map<String, Object>> containers = asList(pod.get("containers"), "containers");
        assertThat(containers).hasSize(1);
        return containers.get(0);
    }

    static List<String> stringList(Object value) {
        assertThat(value).isInstanceOf(List.class);
        return ((List<?>) value).stream().map(String::valueOf).toList();
    }
}
