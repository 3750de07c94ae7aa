"""An embedded cluster: several Apache Kafka nodes on loopback, one KRaft quorum.

What the failover tests and `kmq broker --brokers 3` run: each node is a
broker and a controller voter (three nodes: a quorum that outlives one), and
every topic, the transaction log and the group offsets live on three
replicas with min.insync.replicas 2 (server_properties.py's REPLICATED). A node
killed with SIGKILL is started again on its own data and ports, and
catches up from the others, as a production node restarted by its
supervisor does.
"""

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from types import TracebackType

from confluent_kafka.admin import AdminClient

from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.errors import EmbeddedBrokerError
from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port
from kmqadmin.kafka.embedded.quorum import Quorum, new_cluster_id


class EmbeddedCluster:
    """``size`` nodes with ids 1..size; ``data_dir`` kept if given, else temporary."""

    def __init__(
        self,
        size: int = 3,
        host: str = "127.0.0.1",
        data_dir: Path | None = None,
        jars: Path | None = None,
        ready_timeout: float = 120.0,
        first_port: int = 0,
    ) -> None:
        self.host, self.ready_timeout = host, ready_timeout
        self._temporary = data_dir is None
        self.data_dir = data_dir or Path(tempfile.mkdtemp(prefix="kmq-cluster-"))
        ids = range(1, size + 1)
        quorum = Quorum(new_cluster_id(), {node: free_port(host) for node in ids})
        self.nodes = {
            node: EmbeddedBroker(
                host=host,
                port=first_port + node - 1 if first_port else 0,
                data_dir=self.data_dir / f"node-{node}",
                jars=jars,
                ready_timeout=ready_timeout,
                node_id=node,
                quorum=quorum,
            )
            for node in ids
        }

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(node.bootstrap_servers for node in self.nodes.values())

    @property
    def version(self) -> str:
        return next(iter(self.nodes.values())).version

    def start(self) -> "EmbeddedCluster":
        """Launches every node at once (a quorum elects no leader from one
        voter) and waits until each answers and all have registered."""
        for node in self.nodes.values():
            node.launch()
        self.wait_registered(len(self.nodes))
        return self

    def stop(self) -> None:
        for node in self.nodes.values():
            node.stop()
        if self._temporary:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def exited(self) -> list[int]:
        """The nodes that were started and are no longer running."""
        return [
            node_id
            for node_id, node in self.nodes.items()
            if node.process is not None and node.process.poll() is not None
        ]

    def kill(self, node_id: int) -> None:
        """SIGKILL, as a machine that loses power: no flush, no goodbye."""
        process = self.nodes[node_id].process
        if process is None or process.poll() is not None:
            raise EmbeddedBrokerError(f"node {node_id} is not running")
        os.kill(process.pid, signal.SIGKILL)
        process.wait()

    def restart(self, node_id: int) -> None:
        """Starts a killed node again on its data; returns once it answers
        (it catches up on its partitions after that, as replicas do)."""
        self.nodes[node_id].start()

    def leader(self, topic: str, partition: int, timeout: float = 10.0) -> int:
        """The node leading ``topic``'s ``partition`` (-1: none elected)."""
        metadata = self._admin().list_topics(topic, timeout=timeout).topics[topic]
        return metadata.partitions[partition].leader

    def wait_registered(self, count: int) -> None:
        """Until ``count`` brokers are in the cluster's metadata."""
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            for node_id, node in self.nodes.items():
                if node.process is not None and node.process.poll() is not None:
                    raise EmbeddedBrokerError(f"node {node_id} exited (log: {node.log_path})")
            try:
                if len(self._admin().list_topics(timeout=2).brokers) >= count:
                    return
            except Exception:
                pass
            time.sleep(0.2)
        raise EmbeddedBrokerError(
            f"the embedded cluster did not have {count} brokers within {self.ready_timeout:.0f} s "
            f"(logs: {self.data_dir}/node-*/broker.log)"
        )

    def _admin(self) -> AdminClient:
        return admin_client(self.bootstrap_servers)

    def __enter__(self) -> "EmbeddedCluster":
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
