package io.sr3.flink.cluster;

import io.sr3.flink.testing.Deadline;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.streaming.api.graph.ExecutionPlan;
import org.apache.flink.util.FileUtils;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A real Flink session cluster of separate JVMs on 127.0.0.1: one JobManager
 * ({@code StandaloneSessionClusterEntrypoint}) and TaskManagers ({@code TaskManagerRunner}), the
 * facade the process-cluster tests and benchmarks use. Started on a {@link NamespaceNetwork}, the
 * k-th TaskManager ({@code tm<k>}) runs in host k of that network and the JobManager on its bridge
 * address, so the kernel shapes the links between TaskManagers.
 *
 * <pre>
 *   ProcessCluster ──► ClusterConfigWriter   the keys of each process, config.yaml, log4j2.properties
 *        │        ──► ProcessLauncher       JVMs in their own directories; SIGKILL/STOP/CONT by handle
 *        │        ──► ClusterRestClient     submit, cancel, job state and checkpoints over REST
 *        └──────────► FreePorts             RPC, REST and ring ports below the ephemeral range
 * </pre>
 *
 * <p>It decides which processes run under which names, ports, zones and store directories, also
 * across restarts. {@link #kill} sends SIGKILL to processes this object started, by their handle
 * only; {@link #close} kills every process it started, also when a test failed.
 */
@NotThreadSafe
public final class ProcessCluster implements AutoCloseable {

    private static final String LOCALHOST = ClusterConfigWriter.LOCALHOST;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final ClusterSpec spec;
    private final Path workDir;
    @Nullable private final NamespaceNetwork network;
    private final ClusterConfigWriter configs;
    private final ProcessLauncher launcher;
    private final List<String> seedRingAddresses = new ArrayList<>();
    /** Host, ring port and zone of every TaskManager name ever started: a restart reuses them. */
    private final Map<String, TaskManagerSlot> taskManagerSlots = new LinkedHashMap<>();
    private FlinkProcess jobManager;
    private ClusterRestClient rest;
    private int taskManagersStarted;

    private ProcessCluster(ClusterSpec spec, Path workDir, @Nullable NamespaceNetwork network) {
        this.spec = spec;
        this.workDir = workDir.toAbsolutePath();
        this.network = network;
        if (network != null && network.hosts() < spec.taskManagers()) {
            throw new IllegalArgumentException(spec.taskManagers() + " TaskManagers do not fit a network of "
                    + network.hosts() + " hosts");
        }
        this.configs = new ClusterConfigWriter(spec, this.workDir, network == null ? LOCALHOST : network.bridgeAddress(),
                FreePorts.freePort(), FreePorts.freePort());
        this.launcher = new ProcessLauncher(this.workDir);
    }

    /**
     * Starts the JobManager and {@link ClusterSpec#taskManagers()} TaskManagers and waits until
     * all are registered. On failure every started process is killed.
     */
    public static ProcessCluster start(ClusterSpec spec, Path workDir) throws Exception {
        return start(spec, workDir, null);
    }

    /**
     * Like {@link #start(ClusterSpec, Path)}, with the TaskManagers in the hosts of {@code network}
     * (null: all on 127.0.0.1). The network outlives the cluster: the caller closes it.
     */
    public static ProcessCluster start(ClusterSpec spec, Path workDir, @Nullable NamespaceNetwork network)
            throws Exception {
        ProcessCluster cluster = new ProcessCluster(spec, workDir, network);
        try {
            Files.createDirectories(cluster.workDir);
            List<TaskManagerSlot> initial = new ArrayList<>();
            for (int i = 0; i < spec.taskManagers(); i++) {
                TaskManagerSlot slot = cluster.newSlot(i + 1, spec.zoneOf(i));
                initial.add(slot);
                cluster.seedRingAddresses.add(slot.ringAddress());
            }
            cluster.startJobManager();
            for (TaskManagerSlot slot : initial) {
                cluster.startTaskManager(slot);
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
        if (rest != null) {
            rest.close();
        }
        jobManager = launcher.launch("jobmanager", configs.jobManager(seeds()),
                "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint", List.of(), List.of("-Xmx384m"),
                null, List.of());
        rest = new ClusterRestClient(configs.jobManagerHost(), configs.restPort());
        Deadline.poll("the JobManager's REST endpoint on port " + configs.restPort(), START_TIMEOUT, () -> {
            ProcessLauncher.assertAlive(jobManager);
            return rest.getJson("/overview") != null;
        });
    }

    /** Starts a replacement TaskManager: a new process with a new ring port, seeded with the original ones. */
    public FlinkProcess startTaskManager(String zone) throws Exception {
        return startTaskManager(newSlot(taskManagersStarted + 1, zone));
    }

    private FlinkProcess startTaskManager(TaskManagerSlot slot) throws Exception {
        String name = "tm" + (++taskManagersStarted);
        taskManagerSlots.put(name, slot);
        return launchTaskManager(name, Map.of());
    }

    /** Where the {@code number}-th TaskManager started runs: its network host (or 127.0.0.1) and a free ring port. */
    private TaskManagerSlot newSlot(int number, String zone) {
        if (network != null && number > network.hosts()) {
            throw new IllegalStateException("TaskManager " + number + " has no host: the network has " + network.hosts()
                    + "; restart a TaskManager under its name to run it again in its host");
        }
        return network == null
                ? new TaskManagerSlot(0, LOCALHOST, FreePorts.freePort(), zone)
                : new TaskManagerSlot(number, network.host(number), FreePorts.freePort(), zone);
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
        FlinkProcess live = launcher.liveProcess(name);
        if (live != null) {
            throw new IllegalStateException("TaskManager " + name + " still runs as " + live);
        }
        if (wipeStore) {
            FileUtils.deleteDirectoryQuietly(storeDirectory(name).toFile());
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
            seedRingAddresses.clear();
            for (FlinkProcess tm : taskManagers) {
                TaskManagerSlot old = taskManagerSlots.get(tm.name());
                TaskManagerSlot moved = new TaskManagerSlot(old.networkHost(), old.host(), FreePorts.freePort(), old.zone());
                taskManagerSlots.put(tm.name(), moved);
                seedRingAddresses.add(moved.ringAddress());
            }
        }
        startJobManager();
        List<FlinkProcess> restarted = new ArrayList<>();
        for (FlinkProcess tm : taskManagers) {
            restarted.add(launchTaskManager(tm.name(), Map.of()));
        }
        awaitRegisteredTaskManagers(restarted.size());
        return restarted;
    }

    private FlinkProcess launchTaskManager(String name, Map<String, String> extraConfig) throws Exception {
        TaskManagerSlot slot = taskManagerSlots.get(name);
        Map<String, String> config = configs.taskManager(seeds(), slot.host(), slot.ringPort(), slot.zone(),
                storeDirectory(name), extraConfig);
        return launcher.launch(name, config, "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                List.of("-D", "taskmanager.resource-id=" + name),
                taskManagerJvmOptions(), spec.sr3() ? slot.ringAddress() : null,
                network == null ? List.of() : network.commandPrefix(slot.networkHost()));
    }

    /**
     * The TaskManagers' heap and direct memory limits, then the space-separated options of the
     * system property {@code sr3.cluster.taskmanager-jvm-options} (for example a flight recording
     * when profiling a benchmark).
     */
    private static List<String> taskManagerJvmOptions() {
        List<String> options = new ArrayList<>(
                List.of("-Xmx224m", "-Xms224m", "-XX:MaxDirectMemorySize=256m", "-XX:MaxMetaspaceSize=192m"));
        String extra = System.getProperty("sr3.cluster.taskmanager-jvm-options", "").trim();
        if (!extra.isEmpty()) {
            options.addAll(List.of(extra.split("\\s+")));
        }
        return options;
    }

    /** The initial TaskManagers' ring addresses, then those of TaskManagers started later that are alive. */
    private List<String> seeds() {
        List<String> seeds = new ArrayList<>(seedRingAddresses);
        for (FlinkProcess tm : liveTaskManagers()) {
            if (tm.ringAddress() != null && !seeds.contains(tm.ringAddress())) {
                seeds.add(tm.ringAddress());
            }
        }
        return seeds;
    }

    /** Where the TaskManager of this name keeps its ring store ({@code sr3.store.dir}); it outlives the process. */
    public Path storeDirectory(String taskManagerName) {
        return workDir.resolve(taskManagerName).resolve("store");
    }

    /** The ring addresses ({@code host:port}) the TaskManagers are seeded with: where the ring can be joined. */
    public List<String> ringSeeds() {
        return seeds();
    }

    /** SIGKILLs the given processes at the same moment, then waits until they are gone. */
    public void kill(FlinkProcess... victims) throws InterruptedException {
        launcher.kill(victims);
    }

    /**
     * SIGSTOPs a process this cluster started, by its PID: it keeps its sockets and memory but
     * answers nothing, like a long GC pause or a frozen VM, until {@link #resume}.
     */
    public void pause(FlinkProcess process) throws IOException, InterruptedException {
        launcher.signal(process, "-STOP");
    }

    /** SIGCONTs a process {@link #pause} stopped. */
    public void resume(FlinkProcess process) throws IOException, InterruptedException {
        launcher.signal(process, "-CONT");
    }

    /** The TaskManagers started so far that are still alive, oldest first. */
    public List<FlinkProcess> liveTaskManagers() {
        List<FlinkProcess> live = new ArrayList<>();
        for (FlinkProcess p : launcher.processes()) {
            if (p != jobManager && p.isAlive()) {
                live.add(p);
            }
        }
        return live;
    }

    /** A live TaskManager by name, or null. */
    @Nullable
    public FlinkProcess liveTaskManager(String name) {
        FlinkProcess p = launcher.liveProcess(name);
        return p == jobManager ? null : p;
    }

    public FlinkProcess jobManager() {
        return jobManager;
    }

    public Path workDir() {
        return workDir;
    }

    // ------------------------------------------------------------------ REST

    public JobID submit(ExecutionPlan plan) throws Exception {
        return rest.submit(plan);
    }

    public void cancel(JobID job) throws Exception {
        rest.cancel(job);
    }

    /** The job's status as the REST API reports it ({@code RUNNING}, {@code FINISHED}, ...). */
    public String jobStatus(JobID job) {
        return rest.jobStatus(job);
    }

    /** True when the job and every one of its tasks are RUNNING. */
    public boolean allTasksRunning(JobID job) {
        return rest.allTasksRunning(job);
    }

    /** Names ({@code taskmanager.resource-id}) of the TaskManagers that run tasks of the job. */
    public List<String> taskManagersRunning(JobID job) {
        return rest.taskManagersRunning(job);
    }

    /** {@code /jobs/:id/checkpoints}. */
    public JsonNode checkpoints(JobID job) {
        return rest.checkpoints(job);
    }

    public long completedCheckpoints(JobID job) {
        return checkpoints(job).path("counts").path("completed").asLong(0);
    }

    /** {@code /jobs/:id/exceptions} as text. */
    public String exceptions(JobID job) {
        return rest.exceptions(job);
    }

    /** GET on the REST API; null if the endpoint is not reachable or answers with an error. */
    @Nullable
    public JsonNode getJson(String path) {
        return rest.getJson(path);
    }

    /** Waits until the job and all its tasks run; the timeout message shows the job's state and exceptions. */
    public void awaitAllTasksRunning(JobID job, Duration timeout) {
        Deadline.poll("all tasks of job " + job + " to run", timeout, () -> allTasksRunning(job),
                () -> "job " + jobStatus(job) + ", vertices " + rest.vertexStates(job) + ", exceptions " + exceptions(job));
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

    public void awaitRegisteredTaskManagers(int count) {
        Deadline.poll(count + " registered TaskManagers", START_TIMEOUT, () -> {
            ProcessLauncher.assertAlive(jobManager);
            return rest.registeredTaskManagers() >= count;
        });
    }

    /**
     * Kills every process this cluster started (SIGKILL, by handle), closes the REST client and
     * deletes the processes' temp and store directories (ring stores, RocksDB's native library, blobs) and
     * {@code file://} checkpoints; each process's {@code config.yaml}, log and stdout/stderr stay.
     */
    @Override
    public void close() {
        if (rest != null) {
            rest.close();
        }
        launcher.close();
        FileUtils.deleteDirectoryQuietly(configs.fileCheckpoints().toFile());
    }

    /**
     * What a TaskManager keeps across restarts besides its name and store directory.
     *
     * @param networkHost its host in the cluster's {@link NamespaceNetwork}, 0 without one
     * @param host its address: the network host's, or 127.0.0.1
     */
    private record TaskManagerSlot(int networkHost, String host, int ringPort, String zone) {
        String ringAddress() {
            return host + ":" + ringPort;
        }
    }
}
