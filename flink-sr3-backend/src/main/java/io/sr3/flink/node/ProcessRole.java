package io.sr3.flink.node;

import java.util.Locale;

/**
 * What kind of Flink process this JVM is, read from its main class: the default of
 * {@code sr3.ring.role}.
 *
 * <p>Only processes that live as long as the cluster may hold replicas. A JobManager or a
 * {@code flink run} client started with the TaskManagers' configuration would otherwise join as a
 * storage member, and the blocks placed on it would vanish when it exits.
 */
public enum ProcessRole {
    TASK_MANAGER(RingRole.STORAGE),
    JOB_MANAGER(RingRole.CLIENT),
    COMMAND_LINE(RingRole.CLIENT),
    /** Neither of the above: a MiniCluster, a standalone ring node, an application embedding Flink. */
    OTHER(RingRole.STORAGE);

    private final RingRole ringRole;

    ProcessRole(RingRole ringRole) {
        this.ringRole = ringRole;
    }

    /** The ring role a node of such a process takes unless {@code sr3.ring.role} says otherwise. */
    public RingRole ringRole() {
        return ringRole;
    }

    /** This JVM's kind, from the {@code sun.java.command} property the launcher sets. */
    public static ProcessRole detect() {
        return ofMainClass(mainClass());
    }

    /** The main class of this JVM, or an empty string when the launcher did not say. */
    public static String mainClass() {
        String command = System.getProperty("sun.java.command", "").trim();
        int space = command.indexOf(' ');
        return space < 0 ? command : command.substring(0, space);
    }

    static ProcessRole ofMainClass(String mainClass) {
        String simpleName = mainClass.substring(mainClass.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
        if (simpleName.equals("taskmanagerrunner") || simpleName.endsWith("taskexecutorrunner")) {
            return TASK_MANAGER; // standalone, Kubernetes and YARN TaskManagers
        }
        if (simpleName.contains("clusterentrypoint")) {
            return JOB_MANAGER; // every session, application and job cluster entry point
        }
        if (simpleName.equals("clifrontend") || simpleName.equals("sqlclient") || simpleName.equals("sqlgateway")) {
            return COMMAND_LINE;
        }
        return OTHER;
    }
}
