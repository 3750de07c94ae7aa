"""A real confluent-kafka ShareConsumer (explicit acknowledgement) for tests
that need a share group with a member, and the group configs it needs."""

import time
from types import TracebackType

from confluent_kafka import AcknowledgeType, Message, ShareConsumer
from confluent_kafka.admin import AdminClient

from kmqadmin.kafka.admin.share_group_configs import set_group_configs


def read_from_earliest(bootstrap_servers: str, group_id: str) -> None:
    """A new share group starts at the latest record unless told otherwise."""
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    set_group_configs(admin, group_id, {"share.auto.offset.reset": "earliest"})


class Sharer:
    """One member of a share group on ``topic``; it joins on the first poll."""

    def __init__(self, bootstrap_servers: str, group_id: str, topic: str, client_id: str) -> None:
        self._consumer = ShareConsumer(
            {
                "bootstrap.servers": bootstrap_servers,
                "group.id": group_id,
                "client.id": client_id,
                "share.acknowledgement.mode": "explicit",
            }
        )
        self._consumer.subscribe([topic])

    def accept(self, count: int, timeout: float = 30) -> list[Message]:
        """Polls until ``count`` records came, accepts each, commits."""
        got: list[Message] = []
        deadline = time.monotonic() + timeout
        while len(got) < count:
            assert time.monotonic() < deadline, f"got {len(got)} of {count} records"
            for record in self._consumer.poll(0.5):
                assert record.error() is None, record.error()
                got.append(record)
                self._consumer.acknowledge(record, AcknowledgeType.ACCEPT)
        self._consumer.commit_sync()
        return got

    def poll_once(self) -> None:
        """One poll (keeps the member busy joining); any record is released."""
        for record in self._consumer.poll(0.2):
            self._consumer.acknowledge(record, AcknowledgeType.RELEASE)

    def close(self) -> None:
        self._consumer.close()

    def __enter__(self) -> "Sharer":
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
