package io.sr3.flink.node;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The default ring role follows the process: only processes that live as long as the cluster store. */
class ProcessRoleTest {

    @ParameterizedTest
    @CsvSource({
        "org.apache.flink.runtime.taskexecutor.TaskManagerRunner, TASK_MANAGER, STORAGE",
        "org.apache.flink.kubernetes.taskmanager.KubernetesTaskExecutorRunner, TASK_MANAGER, STORAGE",
        "org.apache.flink.yarn.YarnTaskExecutorRunner, TASK_MANAGER, STORAGE",
        "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint, JOB_MANAGER, CLIENT",
        "org.apache.flink.container.entrypoint.StandaloneApplicationClusterEntryPoint, JOB_MANAGER, CLIENT",
        "org.apache.flink.kubernetes.entrypoint.KubernetesApplicationClusterEntrypoint, JOB_MANAGER, CLIENT",
        "org.apache.flink.client.cli.CliFrontend, COMMAND_LINE, CLIENT",
        "org.apache.flink.table.client.SqlClient, COMMAND_LINE, CLIENT",
        "com.example.MyJobWithAMiniCluster, OTHER, STORAGE",
        "'', OTHER, STORAGE",
    })
    void roleOfMainClass(String mainClass, ProcessRole process, RingRole ring) {
        assertThat(ProcessRole.ofMainClass(mainClass)).isEqualTo(process);
        assertThat(process.ringRole()).isEqualTo(ring);
    }
}
