"""MarkerWriter: acts on a delivery by its coordinates, as the console and API do.

A worker acts through the Message it holds (QueueClient); an operator acts
on a delivery seen in an InFlightView. Either way the action is a marker on
the markers topic that the owning tracker applies in order.
"""

from collections.abc import Iterable

from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.client.clock import now_ms

from . import markers
from .config import QueueConfig


class MarkerWriter:
    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._producer = CheckedProducer(config.bootstrap_servers, config.kafka_config)

    def ack(self, partition: int, offset: int) -> None:
        self._write(partition, offset, markers.END)

    def ack_all(self, deliveries: Iterable[tuple[int, int]]) -> None:
        """End markers for many (partition, offset)s, with one wait for the
        broker: one per run of consecutive offsets in the compact format."""
        by_partition: dict[int, list[int]] = {}
        for partition, offset in deliveries:
            by_partition.setdefault(partition, []).append(offset)
        compact = self.config.marker_format == "compact"
        for partition, offsets in by_partition.items():
            for first, value in markers.ends(offsets, compact):
                self._produce(partition, first, value)
        self._producer.flush(30)

    def retry(self, partition: int, offset: int) -> None:
        """Redelivered now, counting as a delivery."""
        self._write(partition, offset, markers.REDELIVER_NOW)

    def extend(self, partition: int, offset: int, ms: int) -> None:
        """The deadline becomes now + ``ms``."""
        self._write(partition, offset, markers.extend(now_ms() + ms))

    def reject(self, partition: int, offset: int, reason: str = "") -> None:
        """To the DLQ now."""
        self._write(partition, offset, markers.reject(reason))

    def close(self) -> None:
        self._producer.close()

    def _write(self, partition: int, offset: int, value: bytes) -> None:
        """Written and acknowledged before it returns: the caller reports it done."""
        self._produce(partition, offset, value)
        self._producer.flush(10)

    def _produce(self, partition: int, offset: int, value: bytes) -> None:
        self._producer.produce(
            self.config.markers_topic,
            key=markers.encode_key(partition, offset),
            value=value,
            partition=partition,
        )
