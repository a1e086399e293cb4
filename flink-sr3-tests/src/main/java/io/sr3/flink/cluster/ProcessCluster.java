package io.sr3.flink.cluster;

import io.sr3.flink.testing.Deadline;
import org.apache.flink.api.common.JobID;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.graph.ExecutionPlan;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Flink session cluster of separate JVMs on 127.0.0.1: one JobManager
 * ({@code StandaloneSessionClusterEntrypoint}) and TaskManagers ({@code TaskManagerRunner}),
 * started from this JVM's classpath (the classpath stands in for Flink's {@code lib/}: it holds
 * Flink, the flink-sr3 jar and the test job classes, so no job jar is needed).
 *
 * <p>Every process gets its own directory with its {@code config.yaml}, {@code log4j2.properties},
 * log, stdout/stderr and {@code java.io.tmpdir}, and free ports. Jobs are submitted over REST
 * with a {@link RestClusterClient} and a job graph built in this JVM; job state and checkpoint
 * statistics are read over REST. {@link #kill} sends SIGKILL ({@link Process#destroyForcibly}) to
 * processes this object started, by their handle only; {@link #close} kills every process it
 * started, also when a test failed.
 *
 * <p>Settings that make failures visible within seconds (measured, see DESIGN.md section 2):
 * {@code heartbeat.interval} 1 s and {@code heartbeat.timeout} 5 s (a SIGKILLed TaskManager is
 * noticed after about two failed heartbeat RPCs), fixed-delay restarts every 500 ms, REST caches
 * refreshed every 200 ms so polling sees changes, and the ring's failure detector probing every
 * 250 ms with a 2 s timeout.
 */
@NotThreadSafe
public final class ProcessCluster implements AutoCloseable {

    /** The add-opens list of Flink's default {@code env.java.opts.all}, for Java 17. */
    public static final List<String> JAVA_OPENS = List.of(
            "--add-exports=java.base/sun.net.util=ALL-UNNAMED", "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
            "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.text=ALL-UNNAMED",
            "--add-opens=java.base/java.time=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    private static final String LOCALHOST = "127.0.0.1";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final ClusterSpec spec;
    private final Path workDir;
    private final String classpath;
    private final int rpcPort;
    private final int restPort;
    private final List<Integer> seedRingPorts = new ArrayList<>();
    private final List<FlinkProcess> processes = new ArrayList<>();
    /** Ring port and zone of every TaskManager name ever started: a restart reuses them. */
    private final Map<String, TaskManagerSlot> taskManagerSlots = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private FlinkProcess jobManager;
    private RestClusterClient<StandaloneClusterId> client;
    private int taskManagersStarted;

    private ProcessCluster(ClusterSpec spec, Path workDir) {
        this.spec = spec;
        this.workDir = workDir.toAbsolutePath();
        String testClasspath = System.getProperty("surefire.test.class.path");
        this.classpath = testClasspath != null && !testClasspath.isBlank()
                ? testClasspath : System.getProperty("java.class.path");
        this.rpcPort = freePort();
        this.restPort = freePort();
        for (int i = 0; i < spec.taskManagers(); i++) {
            seedRingPorts.add(freePort());
        }
    }

    /**
     * Starts the JobManager and {@link ClusterSpec#taskManagers()} TaskManagers and waits until
     * all are registered. On failure every started process is killed.
     */
    public static ProcessCluster start(ClusterSpec spec, Path workDir) throws Exception {
        ProcessCluster cluster = new ProcessCluster(spec, workDir);
        try {
            Files.createDirectories(cluster.workDir);
            cluster.startJobManager();
            for (int i = 0; i < spec.taskManagers(); i++) {
                cluster.startTaskManager(cluster.seedRingPorts.get(i), spec.zoneOf(i));
            }
            cluster.awaitRegisteredTaskManagers(spec.taskManagers());
            return cluster;
        } catch (Throwable t) {
            cluster.close();
            throw t;
        }
    }

    // ------------------------------------------------------------------ processes

    private void startJobManager() throws Exception {
        if (client != null) {
            client.close();
        }
        Map<String, String> config = commonConfig();
        config.put("jobmanager.bind-host", LOCALHOST);
        config.put("rest.bind-address", LOCALHOST);
        config.put("jobmanager.memory.process.size", "768m");
        if (spec.sr3()) {
            config.put("sr3.ring.role", "client");
            config.put("sr3.ring.host", LOCALHOST);
        }
        jobManager = launch("jobmanager", config, "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
                List.of(), "-Xmx384m");
        Configuration clientConfig = new Configuration();
        clientConfig.set(JobManagerOptions.ADDRESS, LOCALHOST);
        clientConfig.set(RestOptions.ADDRESS, LOCALHOST);
        clientConfig.set(RestOptions.PORT, restPort);
        client = new RestClusterClient<>(clientConfig, StandaloneClusterId.getInstance());
        Deadline.poll("the JobManager's REST endpoint on port " + restPort, START_TIMEOUT, () -> {
            assertAlive(jobManager);
            return getJson("/overview") != null;
        });
    }

    /** Starts a replacement TaskManager: a new process with a new ring port, seeded with the original ones. */
    public FlinkProcess startTaskManager(String zone) throws Exception {
        return startTaskManager(freePort(), zone);
    }

    private FlinkProcess startTaskManager(int ringPort, String zone) throws Exception {
        String name = "tm" + (++taskManagersStarted);
        taskManagerSlots.put(name, new TaskManagerSlot(ringPort, zone));
        return launchTaskManager(name, Map.of());
    }

    /**
     * Starts a TaskManager that ran before and is dead now, under the same name
     * ({@code taskmanager.resource-id}), ring port, zone and store directory ({@link #storeDirectory}):
     * the same node coming back, as after a host reboot.
     *
     * @param wipeStore delete the node's store directory first: the node comes back with an empty disk
     */
    public FlinkProcess restartTaskManager(String name, boolean wipeStore) throws Exception {
        return restartTaskManager(name, wipeStore, Map.of());
    }

    /**
     * Like {@link #restartTaskManager(String, boolean)}, with configuration entries for this start
     * of this TaskManager only, over the cluster's (e.g. {@code sr3.store.max-size} for one node);
     * its next start uses the cluster's configuration again.
     */
    public FlinkProcess restartTaskManager(String name, boolean wipeStore, Map<String, String> extraConfig)
            throws Exception {
        if (!taskManagerSlots.containsKey(name)) {
            throw new IllegalArgumentException("No TaskManager named " + name + " was started; known: " + taskManagerSlots.keySet());
        }
        if (liveProcess(name) != null) {
            throw new IllegalStateException("TaskManager " + name + " still runs as " + liveProcess(name));
        }
        if (wipeStore) {
            deleteRecursively(storeDirectory(name));
        }
        return launchTaskManager(name, extraConfig);
    }

    /**
     * The whole cluster stops at once and comes back: SIGKILLs the JobManager and every live
     * TaskManager in one go (none of them exits cleanly), then starts the JobManager on the same
     * ports and every TaskManager that was alive under its name, with its store directory, and
     * waits until all are registered. Jobs do not survive (there is no high availability): resubmit
     * them from a retained checkpoint.
     *
     * @param newRingPorts give every TaskManager's ring node a new port (a node that moved), and
     *     seed the ring with the new ones
     * @return the restarted TaskManagers
     */
    public List<FlinkProcess> restartAll(boolean newRingPorts) throws Exception {
        List<FlinkProcess> taskManagers = liveTaskManagers();
        List<FlinkProcess> victims = new ArrayList<>(taskManagers);
        victims.add(jobManager);
        kill(victims.toArray(new FlinkProcess[0]));
        if (newRingPorts) {
            seedRingPorts.clear();
            for (FlinkProcess tm : taskManagers) {
                TaskManagerSlot old = taskManagerSlots.get(tm.name);
                TaskManagerSlot moved = new TaskManagerSlot(freePort(), old.zone());
                taskManagerSlots.put(tm.name, moved);
                seedRingPorts.add(moved.ringPort());
            }
        }
        startJobManager();
        List<FlinkProcess> restarted = new ArrayList<>();
        for (FlinkProcess tm : taskManagers) {
            restarted.add(launchTaskManager(tm.name, Map.of()));
        }
        awaitRegisteredTaskManagers(restarted.size());
        return restarted;
    }

    /** Where the TaskManager of this name keeps its ring store ({@code sr3.store.dir}); it outlives the process. */
    public Path storeDirectory(String taskManagerName) {
        return workDir.resolve(taskManagerName).resolve("store");
    }

    /** The ring addresses ({@code host:port}) the TaskManagers are seeded with: where the ring can be joined. */
    public List<String> ringSeeds() {
        return seeds();
    }

    /**
     * SIGSTOPs a process this cluster started, by its PID: it keeps its sockets and memory but
     * answers nothing, like a long GC pause or a frozen VM, until {@link #resume}.
     */
    public void pause(FlinkProcess process) throws IOException, InterruptedException {
        signal(process, "-STOP");
    }

    /** SIGCONTs a process {@link #pause} stopped. */
    public void resume(FlinkProcess process) throws IOException, InterruptedException {
        signal(process, "-CONT");
    }

    private void signal(FlinkProcess target, String signal) throws IOException, InterruptedException {
        if (!processes.contains(target)) {
            throw new IllegalArgumentException(target + " was not started by this cluster");
        }
        if (!target.process.isAlive()) {
            throw new IllegalStateException(target + " is not alive; cannot send " + signal);
        }
        Process kill = new ProcessBuilder("kill", signal, String.valueOf(target.process.pid()))
                .redirectErrorStream(true).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS)) {
            kill.destroyForcibly();
            throw new IllegalStateException("kill " + signal + " " + target + " did not return within 10 s");
        }
        if (kill.exitValue() != 0) {
            throw new IllegalStateException("kill " + signal + " " + target + " exited with " + kill.exitValue() + ": "
                    + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    private FlinkProcess launchTaskManager(String name, Map<String, String> extraConfig) throws Exception {
        TaskManagerSlot slot = taskManagerSlots.get(name);
        int ringPort = slot.ringPort();
        String zone = slot.zone();
        Map<String, String> config = commonConfig();
        config.put("taskmanager.host", LOCALHOST);
        config.put("taskmanager.bind-host", LOCALHOST);
        config.put("taskmanager.numberOfTaskSlots", String.valueOf(spec.slotsPerTaskManager()));
        config.put("taskmanager.cpu.cores", "1");
        config.put("taskmanager.memory.framework.heap.size", "64m");
        config.put("taskmanager.memory.task.heap.size", "160m");
        config.put("taskmanager.memory.framework.off-heap.size", "96m");
        config.put("taskmanager.memory.task.off-heap.size", "0m");
        config.put("taskmanager.memory.network.min", "32m");
        config.put("taskmanager.memory.network.max", "32m");
        config.put("taskmanager.memory.managed.size", "96m");
        config.put("taskmanager.memory.jvm-metaspace.size", "192m");
        config.put("taskmanager.memory.jvm-overhead.min", "64m");
        config.put("taskmanager.memory.jvm-overhead.max", "64m");
        if (spec.sr3()) {
            config.put("sr3.ring.port", String.valueOf(ringPort));
            config.put("sr3.store.dir", storeDirectory(name).toString());
            if (!zone.isEmpty()) {
                config.put("sr3.ring.zone", zone);
            }
        }
        config.putAll(extraConfig);
        FlinkProcess tm = launch(name, config, "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                List.of("-D", "taskmanager.resource-id=" + name), "-Xmx224m", "-Xms224m",
                "-XX:MaxDirectMemorySize=256m", "-XX:MaxMetaspaceSize=192m");
        tm.ringAddress = spec.sr3() ? LOCALHOST + ":" + ringPort : null;
        return tm;
    }

    private Map<String, String> commonConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("jobmanager.rpc.address", LOCALHOST);
        config.put("jobmanager.rpc.port", String.valueOf(rpcPort));
        config.put("rest.address", LOCALHOST);
        config.put("rest.port", String.valueOf(restPort));
        config.put("heartbeat.interval", "1000");
        config.put("heartbeat.timeout", "5000");
        config.put("restart-strategy.type", "fixed-delay");
        config.put("restart-strategy.fixed-delay.attempts", String.valueOf(spec.restartAttempts()));
        config.put("restart-strategy.fixed-delay.delay", "500 ms");
        config.put("slot.request.timeout", "60000");
        config.put("web.refresh-interval", "200");
        config.put("rest.cache.checkpoint-statistics.timeout", "200 ms");
        config.put("execution.checkpointing.interval", spec.checkpointInterval().toMillis() + " ms");
        config.put("execution.checkpointing.num-retained", String.valueOf(spec.retainedCheckpoints()));
        config.put("execution.checkpointing.tolerable-failed-checkpoints", "1000");
        if (spec.sr3()) {
            config.put("state.backend.type", "io.sr3.flink.Sr3StateBackendFactory");
            config.put("execution.checkpointing.storage", "io.sr3.flink.Sr3CheckpointStorageFactory");
            config.put("execution.checkpointing.dir", "sr3:///flink-checkpoints");
            config.put("sr3.working-state", spec.workingState());
            config.put("sr3.ring.replication-factor", String.valueOf(spec.replicationFactor()));
            config.put("sr3.ring.seeds", String.join(";", seeds()));
            config.put("sr3.ring.failure-detector.interval", "250 ms");
            config.put("sr3.ring.failure-detector.timeout", "2 s");
            config.put("sr3.repair.interval", "500 ms");
            config.put("sr3.repair.delay", "0 ms"); // tests kill on purpose and wait for the repair
        } else {
            config.put("state.backend.type", "rocksdb");
            config.put("execution.checkpointing.storage", "filesystem");
            config.put("execution.checkpointing.dir", workDir.resolve("file-checkpoints").toUri().toString());
        }
        config.put("execution.checkpointing.incremental", "true");
        config.putAll(spec.extraConfig());
        return config;
    }

    /** The initial TaskManagers' ring addresses, then those of TaskManagers started later that are alive. */
    private List<String> seeds() {
        List<String> seeds = new ArrayList<>();
        for (int port : seedRingPorts) {
            seeds.add(LOCALHOST + ":" + port);
        }
        for (FlinkProcess tm : liveTaskManagers()) {
            if (tm.ringAddress != null && !seeds.contains(tm.ringAddress)) {
                seeds.add(tm.ringAddress);
            }
        }
        return seeds;
    }

    private FlinkProcess launch(String name, Map<String, String> config, String mainClass, List<String> args,
            String... jvmOptions) throws IOException {
        Path dir = Files.createDirectories(workDir.resolve(name));
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        config.put("io.tmp.dirs", tmp.toString());
        StringBuilder yaml = new StringBuilder();
        config.forEach((k, v) -> yaml.append(k).append(": ").append(quote(v)).append('\n'));
        Files.writeString(dir.resolve("config.yaml"), yaml.toString());
        Files.writeString(dir.resolve("log4j2.properties"), String.join("\n",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = FileAppender",
                "appender.file.name = FileAppender",
                "appender.file.type = File",
                "appender.file.fileName = " + dir.resolve(name + ".log"),
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p [%t] %c{1} - %m%n",
                "logger.pekko.name = org.apache.pekko", "logger.pekko.level = WARN", ""));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(jvmOptions));
        command.add("-Djava.io.tmpdir=" + tmp);
        command.add("-Dlog4j2.configurationFile=" + dir.resolve("log4j2.properties").toUri());
        command.add("-Dlog.file=" + dir.resolve(name + ".log"));
        command.addAll(JAVA_OPENS);
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.add("--configDir");
        command.add(dir.toString());
        command.addAll(args);
        Process process = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.txt").toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("stderr.txt").toFile()))
                .start();
        FlinkProcess flinkProcess = new FlinkProcess(name, process, dir);
        processes.add(flinkProcess);
        return flinkProcess;
    }

    private static String quote(String value) {
        return "'" + value.replace("'", "''") + "'";
    }

    /** SIGKILLs the given processes at the same moment, then waits until they are gone. */
    public void kill(FlinkProcess... victims) throws InterruptedException {
        for (FlinkProcess victim : victims) {
            victim.process.destroyForcibly();
        }
        for (FlinkProcess victim : victims) {
            if (!victim.process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(victim + " survived SIGKILL for 30 s");
            }
        }
    }

    /** The live process of this name, or null. */
    private FlinkProcess liveProcess(String name) {
        for (FlinkProcess p : processes) {
            if (p.name.equals(name) && p.process.isAlive()) {
                return p;
            }
        }
        return null;
    }

    /** The TaskManagers started so far that are still alive, oldest first. */
    public List<FlinkProcess> liveTaskManagers() {
        List<FlinkProcess> live = new ArrayList<>();
        for (FlinkProcess p : processes) {
            if (p != jobManager && p.process.isAlive()) {
                live.add(p);
            }
        }
        return live;
    }

    public FlinkProcess jobManager() {
        return jobManager;
    }

    public Path workDir() {
        return workDir;
    }

    // ------------------------------------------------------------------ REST

    public JobID submit(ExecutionPlan plan) throws Exception {
        return client.submitJob(plan).get(60, TimeUnit.SECONDS);
    }

    public void cancel(JobID job) throws Exception {
        client.cancel(job).get(60, TimeUnit.SECONDS);
    }

    /** The job's status as the REST API reports it ({@code RUNNING}, {@code FINISHED}, ...). */
    public String jobStatus(JobID job) {
        JsonNode json = getJson("/jobs/" + job);
        return json == null ? "UNKNOWN" : json.path("state").asText();
    }

    /** True when the job and every one of its tasks are RUNNING. */
    public boolean allTasksRunning(JobID job) {
        JsonNode json = getJson("/jobs/" + job);
        if (json == null || !"RUNNING".equals(json.path("state").asText())) {
            return false;
        }
        for (JsonNode vertex : json.path("vertices")) {
            if (!"RUNNING".equals(vertex.path("status").asText())) {
                return false;
            }
        }
        return true;
    }

    /** Names ({@code taskmanager.resource-id}) of the TaskManagers that run tasks of the job. */
    public List<String> taskManagersRunning(JobID job) {
        List<String> names = new ArrayList<>();
        JsonNode json = getJson("/jobs/" + job);
        if (json == null) {
            return names;
        }
        for (JsonNode vertex : json.path("vertices")) {
            JsonNode tms = getJson("/jobs/" + job + "/vertices/" + vertex.path("id").asText() + "/taskmanagers");
            if (tms != null) {
                for (JsonNode tm : tms.path("taskmanagers")) {
                    String id = tm.path("taskmanager-id").asText();
                    if (!id.isEmpty() && !names.contains(id)) {
                        names.add(id);
                    }
                }
            }
        }
        return names;
    }

    /** A live TaskManager by name, or null. */
    public FlinkProcess liveTaskManager(String name) {
        for (FlinkProcess tm : liveTaskManagers()) {
            if (tm.name.equals(name)) {
                return tm;
            }
        }
        return null;
    }

    /** {@code /jobs/:id/checkpoints}. */
    public JsonNode checkpoints(JobID job) {
        JsonNode json = getJson("/jobs/" + job + "/checkpoints");
        return json == null ? JSON.createObjectNode() : json;
    }

    public long completedCheckpoints(JobID job) {
        return checkpoints(job).path("counts").path("completed").asLong(0);
    }

    /** {@code /jobs/:id/exceptions} as text. */
    public String exceptions(JobID job) {
        JsonNode json = getJson("/jobs/" + job + "/exceptions?maxExceptions=50");
        return json == null ? "" : json.toString();
    }

    /** Waits until the job and all its tasks run; the timeout message shows the job's state and exceptions. */
    public void awaitAllTasksRunning(JobID job, Duration timeout) {
        Deadline.poll("all tasks of job " + job + " to run", timeout, () -> allTasksRunning(job),
                () -> "job " + jobStatus(job) + ", vertices " + vertexStates(job) + ", exceptions " + exceptions(job));
    }

    private String vertexStates(JobID job) {
        JsonNode json = getJson("/jobs/" + job);
        List<String> states = new ArrayList<>();
        if (json != null) {
            for (JsonNode vertex : json.path("vertices")) {
                states.add(vertex.path("name").asText() + "=" + vertex.path("status").asText());
            }
        }
        return states.toString();
    }

    /** Waits until the job reaches one of the given states; fails early on a terminal state not asked for. */
    public void awaitJobStatus(JobID job, Duration timeout, String... states) {
        List<String> wanted = List.of(states);
        Deadline.poll("job " + job + " to reach " + wanted, timeout, () -> {
            String status = jobStatus(job);
            if (wanted.contains(status)) {
                return true;
            }
            if (List.of("FINISHED", "FAILED", "CANCELED").contains(status)) {
                throw new IllegalStateException("Job " + job + " is " + status + " instead of " + wanted
                        + "; exceptions: " + exceptions(job));
            }
            return false;
        });
    }

    /** GET on the REST API; null if the endpoint is not reachable or answers with an error. */
    public JsonNode getJson(String path) {
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://" + LOCALHOST + ":" + restPort + path))
                            .timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return response.statusCode() == 200 ? JSON.readTree(response.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while calling the REST API", e);
        }
    }

    public void awaitRegisteredTaskManagers(int count) {
        Deadline.poll(count + " registered TaskManagers", START_TIMEOUT, () -> {
            assertAlive(jobManager);
            JsonNode json = getJson("/taskmanagers");
            return json != null && json.path("taskmanagers").size() >= count;
        });
    }

    private static void assertAlive(FlinkProcess process) {
        if (!process.process.isAlive()) {
            throw new IllegalStateException(process + " exited with " + process.process.exitValue() + "; see " + process.dir);
        }
    }

    /**
     * A port that is free now, below Linux's ephemeral range (32768-60999): a process starts on it
     * seconds later, and in the meantime an outgoing connection (the ring's failure detector dials
     * dead addresses many times a second) may be given any free ephemeral port, one picked by
     * {@code new ServerSocket(0)} included.
     */
    static int freePort() {
        int port = randomFreePort(List.of(LOCALHOST));
        if (port > 0) {
            return port;
        }
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName(LOCALHOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A port that is free now on every one of {@code hosts} (local addresses such as 127.0.0.2:
     * all of 127/8 is loopback on Linux), for nodes that listen on the same port at several
     * addresses; picked from the same range as {@link #freePort()}.
     *
     * @throws IllegalStateException if 100 candidates were all taken on one of the hosts
     */
    static int freePort(List<String> hosts) {
        int port = randomFreePort(hosts);
        if (port == 0) {
            throw new IllegalStateException("No port between 20000 and 31999 was free on all of " + hosts
                    + " in 100 attempts");
        }
        return port;
    }

    /** A random port between 20000 and 31999 free on every one of {@code hosts}, or 0 after 100 taken ones. */
    private static int randomFreePort(List<String> hosts) {
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 100; attempt++) {
            int candidate = 20_000 + random.nextInt(12_000);
            List<ServerSocket> bound = new ArrayList<>();
            try {
                for (String host : hosts) {
                    bound.add(new ServerSocket(candidate, 1, java.net.InetAddress.getByName(host)));
                }
                return candidate;
            } catch (IOException taken) {
                // try another
            } finally {
                for (ServerSocket socket : bound) {
                    try {
                        socket.close();
                    } catch (IOException ignored) {
                        // closing a listening socket that accepted nothing
                    }
                }
            }
        }
        return 0;
    }

    /**
     * Kills every process this cluster started (SIGKILL, by handle), closes the REST client and
     * deletes the processes' temp and store directories (ring stores, RocksDB's native library, blobs) and
     * {@code file://} checkpoints; each process's {@code config.yaml}, log and stdout/stderr stay.
     */
    @Override
    public void close() {
        if (client != null) {
            client.close();
        }
        for (FlinkProcess p : processes) {
            p.process.destroyForcibly();
        }
        for (FlinkProcess p : processes) {
            try {
                p.process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        for (FlinkProcess p : processes) {
            if (!p.process.isAlive()) {
                deleteRecursively(p.dir.resolve("tmp"));
                deleteRecursively(p.dir.resolve("store"));
            }
        }
        deleteRecursively(workDir.resolve("file-checkpoints"));
    }

    /** Deletes a directory tree, best effort: what cannot be deleted stays. */
    static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (java.util.stream.Stream<Path> paths = Files.walk(root)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // best effort: a leftover temp directory is not worth failing a test for
        }
    }

    /** What a TaskManager keeps across restarts besides its name and store directory. */
    private record TaskManagerSlot(int ringPort, String zone) {}

    /** One JVM of the cluster. */
    public static final class FlinkProcess {
        private final String name;
        private final Process process;
        private final Path dir;
        private String ringAddress;

        FlinkProcess(String name, Process process, Path dir) {
            this.name = name;
            this.process = process;
            this.dir = dir;
        }

        public String name() {
            return name;
        }

        public long pid() {
            return process.pid();
        }

        public boolean isAlive() {
            return process.isAlive();
        }

        /** {@code host:port} of this TaskManager's ring node; null for the JobManager or without sr3. */
        public String ringAddress() {
            return ringAddress;
        }

        public Path directory() {
            return dir;
        }

        @Override
        public String toString() {
            return name + " (pid " + process.pid() + ")";
        }
    }
}
