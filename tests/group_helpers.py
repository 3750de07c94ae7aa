"""A real confluent-kafka consumer group for tests: records produced at
known times, and a member that joins, reads, commits and leaves."""

import time

from confluent_kafka import Consumer, Producer


def produce(bootstrap_servers: str, topic: str, per_partition: int, at: int = 0) -> None:
    """``per_partition`` records on partitions 0 and 1, stamped ``at`` (epoch
    ms; 0: now)."""
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for i in range(per_partition):
        for partition in (0, 1):
            producer.produce(topic, b"v%d" % i, partition=partition, timestamp=at)
    assert producer.flush(10) == 0


class GroupMember:
    """A member of ``group`` on ``topic`` while the block runs."""

    def __init__(self, bootstrap_servers: str, group: str, topic: str) -> None:
        self.client = Consumer(
            {
                "bootstrap.servers": bootstrap_servers,
                "group.id": group,
                "client.id": "reader-1",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        self.client.subscribe([topic])

    def __enter__(self) -> "GroupMember":
        return self

    def __exit__(self, *_: object) -> None:
        self.client.close()

    def read(self, count: int) -> None:
        """Polls until ``count`` records came, then commits them."""
        got, deadline = 0, time.monotonic() + 30
        while got < count:
            assert time.monotonic() < deadline, f"read {got} of {count}"
            message = self.client.poll(0.5)
            if message is not None and message.error() is None:
                got += 1
        self.client.commit(asynchronous=False)

    def poll(self) -> None:
        """One poll: joins the group (or keeps the member in it)."""
        self.client.poll(0.5)


def consumed_group(bootstrap_servers: str, topic: str, group: str) -> str:
    """``group`` read four records per partition of ``topic`` (two an hour
    ago, two now) and left: offsets 4, 4 committed."""
    produce(bootstrap_servers, topic, 2, at=int(time.time() * 1000) - 3_600_000)
    produce(bootstrap_servers, topic, 2)
    with GroupMember(bootstrap_servers, group, topic) as member:
        member.read(8)
    return group
