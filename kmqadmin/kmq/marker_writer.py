"""MarkerWriter: acts on a delivery by its coordinates, as the console and API do.

A worker acts through the Message it holds (QueueClient); an operator acts
on a delivery seen in an InFlightView. Either way the action is a marker on
the markers topic that the owning tracker applies in order.
"""

from collections.abc import Iterable

from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import markers
from kmqadmin.kmq.config import QueueConfig

Deliveries = Iterable[tuple[int, int]]  # (partition, offset)s
ONE_S = 10.0  # a wait for one marker (a person's action)
MANY_S = 30.0  # a wait for a batch's


class MarkerWriter:
    """Kept per queue by a web process and shared by its requests, each of
    which waits for its own markers only: a flush would wait for every
    request's, and under steady deletes from several SQS clients the
    producer is seldom empty (bench/sqs.py). No linger: each write is waited
    for at once."""

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._producer = CheckedProducer(
            config.bootstrap_servers, {"linger.ms": 0, **config.kafka_config}, confirm_each=True
        )

    def ack(self, partition: int, offset: int) -> None:
        self.ack_all([(partition, offset)], ONE_S)

    def ack_all(self, deliveries: Deliveries, timeout: float = MANY_S) -> None:
        """End markers, with one wait for the broker: one per run of
        consecutive offsets in the compact format."""
        by_partition: dict[int, list[int]] = {}
        for partition, offset in deliveries:
            by_partition.setdefault(partition, []).append(offset)
        compact = self.config.marker_format == "compact"
        ends = [
            (partition, first, value)
            for partition, offsets in by_partition.items()
            for first, value in markers.ends(offsets, compact)
        ]
        self._write(ends, timeout)

    def retry(self, partition: int, offset: int) -> None:
        self.retry_all([(partition, offset)], ONE_S)

    def retry_all(self, deliveries: Deliveries, timeout: float = MANY_S) -> None:
        """Redelivered now, counting as a delivery."""
        self._write_each(deliveries, markers.REDELIVER_NOW, timeout)

    def extend(self, partition: int, offset: int, ms: int) -> None:
        self.extend_all([(partition, offset)], ms, ONE_S)

    def extend_all(self, deliveries: Deliveries, ms: int, timeout: float = MANY_S) -> None:
        """The deadline becomes now + ``ms``."""
        self._write_each(deliveries, markers.extend(now_ms() + ms), timeout)

    def reject(self, partition: int, offset: int, reason: str = "") -> None:
        self.reject_all([(partition, offset)], reason, ONE_S)

    def reject_all(self, deliveries: Deliveries, reason: str = "", timeout: float = MANY_S) -> None:
        """To the DLQ now."""
        self._write_each(deliveries, markers.reject(reason), timeout)

    def close(self) -> None:
        self._producer.close()

    def _write_each(self, deliveries: Deliveries, value: bytes, timeout: float) -> None:
        self._write([(partition, offset, value) for partition, offset in deliveries], timeout)

    def _write(self, found: list[tuple[int, int, bytes]], timeout: float) -> None:
        """Written and acknowledged before it returns, as the caller reports
        it done; the first failure raised (OutcomeUnknown: no report came)."""
        records = [
            {"key": markers.encode_key(p, o), "value": value, "partition": p}
            for p, o, value in found
        ]
        outcomes = self._producer.produce_all_confirmed(self.config.markers_topic, records, timeout)
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                raise outcome
