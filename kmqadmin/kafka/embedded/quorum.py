"""The controller quorum of an embedded cluster of several nodes, and the
cluster id its storage is formatted with."""

import base64
import uuid
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Quorum:
    """The controller quorum of a cluster of several nodes (cluster.py):
    every node is a broker and a voter, on controller ports fixed for the
    cluster's life, so a node restarted finds its peers where they were."""

    cluster_id: str
    controller_ports: Mapping[int, int]  # node id -> its controller port

    def voters(self, host: str) -> str:
        return ",".join(f"{node}@{host}:{port}" for node, port in self.controller_ports.items())


def new_cluster_id() -> str:
    """A random cluster id as Kafka's Uuid.randomUuid makes one: URL-safe base64
    of a UUID, never starting with "-" (a command line would take it for an option)."""
    while True:
        found = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not found.startswith("-"):
            return found
