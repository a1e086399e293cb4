package io.sr3.flink.benchmark;

import org.apache.hadoop.hdfs.MiniDFSCluster;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A real HDFS in this JVM, the distributed file system flink-sr3 replaces: a MiniDFSCluster with
 * {@link #DATA_NODES} DataNodes on loopback and a replication of as many, which Flink reaches as
 * {@code hdfs://} through flink-hadoop-fs.
 */
final class HdfsCluster implements AutoCloseable {

    static final int DATA_NODES = 3;

    private final MiniDFSCluster cluster;

    private HdfsCluster(MiniDFSCluster cluster) {
        this.cluster = cluster;
    }

    static HdfsCluster start(Path baseDirectory) throws IOException {
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, baseDirectory.toAbsolutePath().toString());
        conf.setInt("dfs.replication", DATA_NODES);
        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(DATA_NODES).build();
        cluster.waitActive();
        return new HdfsCluster(cluster);
    }

    /** {@code hdfs://host:port}, without a trailing slash. */
    String uri() {
        String uri = cluster.getURI().toString();
        return uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
    }

    /** Stops the NameNode and DataNodes and deletes their directories (the checkpoints in them). */
    @Override
    public void close() {
        cluster.shutdown(true);
    }
}
