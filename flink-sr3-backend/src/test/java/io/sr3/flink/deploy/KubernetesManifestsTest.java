package io.sr3.flink.deploy;

import io.sr3.flink.Sr3CheckpointStorageFactory;
import io.sr3.flink.Sr3Options;
import io.sr3.flink.Sr3PacingOptions;
import io.sr3.flink.Sr3StateBackendFactory;
import io.sr3.flink.node.NodeConfig;
import org.apache.flink.configuration.BlobServerOptions;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.HeartbeatManagerOptions;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.SecurityOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static io.sr3.flink.deploy.Manifest.asList;
import static io.sr3.flink.deploy.Manifest.named;
import static io.sr3.flink.deploy.Manifest.string;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes examples in {@code deploy/kubernetes/}: each pod's Flink configuration, as the pod
 * will see it, loads through Flink's own parser and passes Flink's typed options and flink-sr3's
 * validation; the ring port, the headless Service, the seeds, the store volume, the credentials and
 * the Prometheus port agree between the configuration and the pod specs.
 */
class KubernetesManifestsTest {

    private static final Path DEPLOY = Paths.get("..", "deploy", "kubernetes");
    private static final String RING_PORT_NAME = "sr3-ring";
    private static final String PROMETHEUS_FACTORY = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory";
    /** Where the official image's entrypoint and start scripts read the configuration. */
    private static final String FLINK_CONF_DIR = "/opt/flink/conf";
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");

    /** Flink's option classes whose keys the examples may use; any other non-sr3 key is a typo. */
    private static final List<Class<?>> FLINK_OPTIONS = List.of(BlobServerOptions.class, CheckpointingOptions.class,
            ClusterOptions.class, CoreOptions.class, DeploymentOptions.class, ExecutionOptions.class,
            HeartbeatManagerOptions.class, HighAvailabilityOptions.class, JobManagerOptions.class, MetricOptions.class,
            PipelineOptions.class, RestOptions.class, RestartStrategyOptions.class, SecurityOptions.class,
            StateBackendOptions.class, TaskManagerOptions.class, WebOptions.class);

    @TempDir
    Path tmp;

    @Test
    void standaloneSessionCluster() throws Exception {
        List<Manifest> manifests = Manifest.loadAll(DEPLOY.resolve("standalone"));
        Manifest configMap = only(manifests, "ConfigMap");
        String template = (String) configMap.map("data").get("config.yaml");
        Manifest taskManagers = only(manifests, "StatefulSet");
        Manifest jobManager = only(manifests, "Deployment");

        Map<String, Object> tmPod = taskManagers.map("spec.template.spec");
        String tmPodName = taskManagers.name() + "-0";
        Configuration tmConfig = standaloneConfig(configMap, template, tmPod, tmPodName, "taskmanager");
        NodeConfig tm = validate(tmConfig);
        Map<String, Object> tmContainer = Pods.onlyContainer(tmPod);
        ringAgrees(manifests, tm, taskManagers.map("spec.template.metadata.labels"), tmContainer);
        assertThat(tmConfig.get(TaskManagerOptions.TASK_MANAGER_RESOURCE_ID))
                .as("taskmanager.resource-id: the StatefulSet pod's stable name").isEqualTo(tmPodName);
        Set<String> claims = taskManagers.list("spec.volumeClaimTemplates").stream()
                .map(c -> string(c, "metadata.name")).collect(Collectors.toSet());
        storeOnVolume(tm, tmContainer, claims);
        assertThat(tm.security().authenticates()).as("TLS or a shared secret").isTrue();
        assertThat(tm.secret()).as("the secret rendered from the Secret").isEqualTo(testValue("SR3_TRANSPORT_SECRET"));
        prometheus(tmConfig, tmContainer);

        Map<String, Object> jmPod = jobManager.map("spec.template.spec");
        Configuration jmConfig = standaloneConfig(configMap, template, jmPod, jobManager.name() + "-7d4b9c-x2x7q", "jobmanager");
        NodeConfig jm = validate(jmConfig);
        assertThat(jm.seeds()).isEqualTo(tm.seeds());
        assertThat(jm.secret()).isEqualTo(tm.secret());
        prometheus(jmConfig, Pods.onlyContainer(jmPod));
        Manifest jmService = Manifest.find(manifests, "Service", tmConfig.get(JobManagerOptions.ADDRESS));
        assertThat(jobManager.map("spec.template.metadata.labels")).containsAllEntriesOf(selector(jmService));
        assertThat(jmService.list("spec.ports")).extracting(p -> p.get("port"))
                .contains(tmConfig.get(JobManagerOptions.PORT), tmConfig.get(RestOptions.PORT));
    }

    @Test
    void flinkKubernetesOperatorDeployment() throws Exception {
        List<Manifest> manifests = Manifest.loadAll(DEPLOY.resolve("operator"));
        Manifest deployment = only(manifests, "FlinkDeployment");
        assertThat(string(deployment.object(), "apiVersion")).isEqualTo("flink.apache.org/v1beta1");
        String[] flinkVersion = pomProperty("flink.version").split("\\.");
        assertThat(string(deployment.object(), "spec.flinkVersion")).isEqualTo("v" + flinkVersion[0] + "_" + flinkVersion[1]);
        assertThat(string(deployment.object(), "spec.job.upgradeMode"))
                .as("the ring goes with the cluster: upgrades must go through a savepoint").isEqualTo("savepoint");
        Map<String, Object> flinkConfiguration = deployment.map("spec.flinkConfiguration");
        flinkConfiguration.forEach((key, value) -> assertThat(value).as("flinkConfiguration %s: the CRD takes strings", key)
                .isInstanceOf(String.class));

        // What Flink's native Kubernetes integration adds for the TaskManager pods it creates.
        String name = deployment.name();
        Map<String, String> nativeSettings = Map.of("kubernetes.cluster-id", name,
                TaskManagerOptions.TASK_MANAGER_RESOURCE_ID.key(), name + "-taskmanager-1-1");
        Map<String, Object> tmPod = deployment.map("spec.taskManager.podTemplate.spec");
        Map<String, Object> tmContainer = named(asList(tmPod.get("containers"), "containers"), "flink-main-container");
        Configuration tmConfig = operatorConfig(flinkConfiguration, nativeSettings, tmPod, tmContainer, "taskmanager");
        NodeConfig tm = validate(tmConfig);
        ringAgrees(manifests, tm, Map.of("app", name, "component", "taskmanager"), tmContainer);
        Set<String> podVolumes = asList(tmPod.get("volumes"), "volumes").stream()
                .filter(v -> v.containsKey("ephemeral") || v.containsKey("persistentVolumeClaim"))
                .map(v -> (String) v.get("name")).collect(Collectors.toSet());
        storeOnVolume(tm, tmContainer, podVolumes);
        assertThat(tm.security().tls()).as("TLS from the Secret").isNotNull();
        assertThat(tm.durability().clusterId()).isEqualTo(name);
        prometheus(tmConfig, tmContainer);

        Map<String, Object> jmPod = deployment.map("spec.jobManager.podTemplate.spec");
        Map<String, Object> jmContainer = named(asList(jmPod.get("containers"), "containers"), "flink-main-container");
        Configuration jmConfig = operatorConfig(flinkConfiguration, Map.of("kubernetes.cluster-id", name), jmPod,
                jmContainer, "jobmanager");
        NodeConfig jm = validate(jmConfig);
        assertThat(jm.security().tls()).as("the JobManager's ring client uses the same TLS").isNotNull();
        prometheus(jmConfig, jmContainer);
    }

    @Test
    void imageAddsTheBuiltJarToLib() throws Exception {
        String dockerfile = Files.readString(DEPLOY.resolve("Dockerfile"));
        assertThat(dockerfile).contains("ARG FLINK_IMAGE=flink:" + pomProperty("flink.version") + "-java17");
        String version = pomVersion();
        assertThat(dockerfile).contains("ARG SR3_JAR=flink-sr3-backend/target/flink-sr3-backend-" + version + ".jar")
                .contains("COPY --chown=flink:flink ${SR3_JAR} /opt/flink/lib/");
    }

    /**
     * The configuration a standalone pod runs with: the ConfigMap's template rendered by the pod's
     * init container (each {@code ${VAR}} from a Secret), the main container's {@code -D} arguments
     * with Kubernetes' {@code $(VAR)} expanded, and what the image's entrypoint writes.
     */
    private Configuration standaloneConfig(Manifest configMap, String template, Map<String, Object> pod, String podName,
            String role) throws Exception {
        Map<String, Object> init = named(asList(pod.get("initContainers"), "initContainers"), "render-config");
        String command = String.join(" ", Pods.stringList(init.get("command")));
        Map<String, String> fromSecrets = Pods.secretEnvironment(init);
        Matcher placeholder = PLACEHOLDER.matcher(template);
        StringBuilder rendered = new StringBuilder();
        while (placeholder.find()) {
            String variable = placeholder.group(1);
            assertThat(command).as("the init container renders ${%s}", variable).contains("'${" + variable + "}'");
            assertThat(fromSecrets).as("${%s} comes from a Secret", variable).containsKey(variable);
            placeholder.appendReplacement(rendered, Matcher.quoteReplacement(testValue(variable)));
        }
        placeholder.appendTail(rendered);

        Map<String, Object> main = Pods.onlyContainer(pod);
        String renderedVolume = Pods.volumeAt(main, FLINK_CONF_DIR);
        String renderedPath = (String) named(asList(init.get("volumeMounts"), "volumeMounts"), renderedVolume).get("mountPath");
        assertThat(command).contains("> " + renderedPath + "/config.yaml");
        String templatePath = (String) named(asList(init.get("volumeMounts"), "volumeMounts"),
                Pods.volumeOf(pod, "configMap", configMap.name())).get("mountPath");
        assertThat(command).contains("< " + templatePath + "/config.yaml");

        Path dir = Files.createDirectories(tmp.resolve(role));
        Files.writeString(dir.resolve("config.yaml"), rendered);
        Configuration config = GlobalConfiguration.loadConfiguration(dir.toString(), Pods.dynamicProperties(main, podName));
        // The image's entrypoint writes jobmanager.rpc.address (default: this pod's own host name).
        String jobManagerAddress = Pods.environment(main, podName).get("JOB_MANAGER_RPC_ADDRESS");
        assertThat(jobManagerAddress).as("JOB_MANAGER_RPC_ADDRESS of the %s", role).isNotNull();
        config.set(JobManagerOptions.ADDRESS, jobManagerAddress);
        return config;
    }

    /**
     * The configuration an operator pod runs with: {@code flinkConfiguration}, what Flink's native
     * integration adds, and the paths into mounted Secrets pointed at stand-in files here.
     */
    private Configuration operatorConfig(Map<String, Object> flinkConfiguration, Map<String, String> nativeSettings,
            Map<String, Object> pod, Map<String, Object> main, String role) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve(role));
        Map<String, Object> config = new TreeMap<>(flinkConfiguration);
        config.putAll(nativeSettings);
        for (String key : List.of(SecurityOptions.SSL_INTERNAL_KEYSTORE.key(), SecurityOptions.SSL_INTERNAL_TRUSTSTORE.key())) {
            if (config.get(key) instanceof String file) {
                String volume = Pods.volumeAt(main, file);
                assertThat(Pods.volumeOf(pod, "secret", null)).as("%s is in a mounted Secret", key).isEqualTo(volume);
                Path standIn = dir.resolve("secret" + file);
                Files.createDirectories(standIn.getParent());
                Files.writeString(standIn, "stands in for " + file);
                config.put(key, standIn.toString());
            }
        }
        Files.writeString(dir.resolve("config.yaml"), new Dump(DumpSettings.builder().build()).dumpToString(config));
        return GlobalConfiguration.loadConfiguration(dir.toString());
    }

    /** Runs Flink's typed options and flink-sr3's validation over the configuration. */
    private static NodeConfig validate(Configuration config) {
        Map<String, ConfigOption<?>> flinkOptions = flinkOptions();
        for (String key : config.toMap().keySet()) {
            if (key.startsWith("sr3.") || key.startsWith("metrics.reporter.") || key.startsWith("kubernetes.")) {
                continue; // sr3.* below; reporters and the native integration have options outside flink-core
            }
            assertThat(flinkOptions).as("'%s' is a Flink option", key).containsKey(key);
            config.get(flinkOptions.get(key)); // throws on a value of the wrong type
        }
        NodeConfig node = Sr3Options.nodeConfig(config);
        Sr3PacingOptions.settings(config);
        assertThat(config.get(StateBackendOptions.STATE_BACKEND)).isEqualTo(Sr3StateBackendFactory.class.getName());
        assertThat(config.get(CheckpointingOptions.CHECKPOINT_STORAGE)).isEqualTo(Sr3CheckpointStorageFactory.class.getName());
        config.getOptional(CheckpointingOptions.CHECKPOINTS_DIRECTORY).ifPresent(directory ->
                assertThat(URI.create(directory).getScheme()).as("execution.checkpointing.dir").isEqualTo("sr3"));
        assertThat(config.getOptional(CheckpointingOptions.SAVEPOINT_DIRECTORY)).as("a durable savepoint directory")
                .hasValueSatisfying(directory -> assertThat(URI.create(directory).getScheme()).isNotEqualTo("sr3"));
        return node;
    }

    /** One known ring port, declared on the pods and the headless Service; the seeds are that Service. */
    private static void ringAgrees(List<Manifest> manifests, NodeConfig node, Map<String, Object> podLabels,
            Map<String, Object> container) {
        assertThat(node.ports()).as("sr3.ring.port: one known port for seeds to name").hasSize(1);
        int ringPort = node.ports().get(0);
        assertThat(ringPort).isPositive();
        assertThat(named(asList(container.get("ports"), "ports"), RING_PORT_NAME).get("containerPort"))
                .as("the ring port declared on the pod").isEqualTo(ringPort);
        List<Manifest> headless = Manifest.ofKind(manifests, "Service").stream()
                .filter(s -> "None".equals(s.map("spec").get("clusterIP")))
                .filter(s -> podLabels.entrySet().containsAll(selector(s).entrySet()))
                .toList();
        assertThat(headless).as("one headless Service selecting the TaskManagers %s", podLabels).hasSize(1);
        Manifest service = headless.get(0);
        Map<String, Object> servicePort = named(service.list("spec.ports"), RING_PORT_NAME);
        assertThat(servicePort.get("port")).isEqualTo(ringPort);
        assertThat(servicePort.get("targetPort")).isIn(RING_PORT_NAME, ringPort);
        assertThat(node.seeds()).as("sr3.ring.seeds").isNotEmpty().allSatisfy(seed -> {
            String host = seed.substring(0, seed.lastIndexOf(':'));
            assertThat(host.equals(service.name()) || host.startsWith(service.name() + "."))
                    .as("seed %s names the headless Service %s", seed, service.name()).isTrue();
            assertThat(seed.substring(seed.lastIndexOf(':') + 1)).isEqualTo(String.valueOf(ringPort));
        });
    }

    /** The block store lies on one of the given (persistent) volumes. */
    private static void storeOnVolume(NodeConfig node, Map<String, Object> container, Set<String> volumes) {
        Path store = node.storeDirectory();
        assertThat(store).as("sr3.store.dir, or its default from taskmanager.resource-id").isNotNull();
        assertThat(volumes).as("the volume holding the store %s", store).contains(Pods.volumeAt(container, store.toString()));
    }

    private static void prometheus(Configuration config, Map<String, Object> container) {
        Map<String, String> raw = config.toMap();
        assertThat(raw.get("metrics.reporter.prom.factory.class")).isEqualTo(PROMETHEUS_FACTORY);
        int port = Integer.parseInt(raw.get("metrics.reporter.prom.port"));
        assertThat(named(asList(container.get("ports"), "ports"), "metrics").get("containerPort")).isEqualTo(port);
    }

    private static Manifest only(List<Manifest> manifests, String kind) {
        List<Manifest> found = Manifest.ofKind(manifests, kind);
        assertThat(found).as(kind).hasSize(1);
        return found.get(0);
    }

    private static Map<String, Object> selector(Manifest service) {
        return service.map("spec.selector");
    }

    /** What the test puts where a pod would see the value of a Secret. */
    private static String testValue(String variable) {
        return "test-value-of-" + variable.toLowerCase();
    }

    /** Every key, current and deprecated, of Flink's options in {@link #FLINK_OPTIONS}. */
    private static Map<String, ConfigOption<?>> flinkOptions() {
        Map<String, ConfigOption<?>> options = new HashMap<>();
        for (Class<?> type : FLINK_OPTIONS) {
            for (Field field : type.getFields()) {
                if (Modifier.isStatic(field.getModifiers()) && ConfigOption.class.isAssignableFrom(field.getType())) {
                    try {
                        ConfigOption<?> option = (ConfigOption<?>) field.get(null);
                        options.putIfAbsent(option.key(), option);
                        option.fallbackKeys().forEach(k -> options.putIfAbsent(k.getKey(), option));
                    } catch (IllegalAccessException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        }
        return options;
    }

    private static String pomProperty(String name) throws Exception {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</").matcher(Files.readString(Paths.get("..", "pom.xml")));
        assertThat(m.find()).as("%s in the parent pom", name).isTrue();
        return m.group(1).trim();
    }

    private static String pomVersion() throws Exception {
        Matcher m = Pattern.compile("<artifactId>flink-sr3-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(Paths.get("..", "pom.xml")));
        assertThat(m.find()).isTrue();
        return m.group(1).trim();
    }
}
