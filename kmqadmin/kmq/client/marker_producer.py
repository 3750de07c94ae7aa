"""The worker's producer of markers: how they are sent, and how a failure
to write one is told.

kmq's format sends each at once, since a poll waits for its start markers,
and reports only failures, since a Python callback per marker would cost as
much as writing it. The compact format waits for none: its few records per
poll go out with librdkafka's usual linger (a wake-up of its threads per
record cost a fifth of the client's rate in bench/kmq_throughput.py), and
its start ranges' reports say what may be committed. A failed marker is
raised at the next wait for the broker, saying which.
"""

from collections.abc import Callable, Iterable

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.message import Message

Delivered = Callable[[KafkaError | None, KafkaMessage], None]


class MarkerProducer:
    def __init__(self, config: QueueConfig, compact: bool) -> None:
        self.topic = config.markers_topic
        self._failed: list[str] = []
        self._producer = Producer(
            producer_config(
                config.bootstrap_servers,
                extra={
                    "linger.ms": 5 if compact else 0,
                    "delivery.report.only.error": not compact,
                    "on_delivery": self._delivered,
                    **config.kafka_config,
                },
            )
        )

    @property
    def failed(self) -> bool:
        """A marker failed since the last wait (the next one raises)."""
        return bool(self._failed)

    def produce(
        self, partition: int, key: bytes, value: bytes, on_delivery: Delivered | None = None
    ) -> None:
        if on_delivery is None:
            self._producer.produce(self.topic, value, key, partition)
        else:
            self._producer.produce(self.topic, value, key, partition, on_delivery=on_delivery)

    def for_message(self, message: Message, value: bytes) -> None:
        self.produce(message.partition, message.marker_key, value)

    def for_all(self, messages: Iterable[Message], value: bytes, what: str) -> None:
        """One marker ``value`` per message, one produce_batch per partition."""
        batches: dict[int, list[dict]] = {}
        for message in messages:
            batches.setdefault(message.partition, []).append(
                {"value": value, "key": message.marker_key}
            )
        self.batches(batches, what)

    def batches(self, batches: dict[int, list[dict]], what: str) -> None:
        """produce_batch per partition: a produce() per marker costs twice as
        much. (produce_batch ignores a per-message partition.)"""
        for partition, batch in batches.items():
            queued = self._producer.produce_batch(self.topic, batch, partition)
            if queued != len(batch):
                failed = next(m["_error"] for m in batch if "_error" in m)
                raise KafkaException(f"{what} markers not queued ({failed})")

    def serve(self) -> None:
        """Serves the delivery reports that have come."""
        self._producer.poll(0)

    def flush(self, timeout: float) -> int:
        """What is still unsent after ``timeout``; failures are kept for await_all."""
        return self._producer.flush(timeout)

    def await_all(self, timeout: float = 30.0) -> None:
        """Every marker written so far on the broker, or KafkaException."""
        remaining = self._producer.flush(timeout)
        if remaining or self._failed:
            failed, self._failed = self._failed, []
            raise KafkaException(
                f"markers not written ({remaining} pending, {len(failed)} failed"
                f"{': ' + failed[0] if failed else ''}); offsets were not committed"
            )

    def _delivered(self, err: KafkaError | None, msg: KafkaMessage) -> None:
        if err is not None:
            self._failed.append(err.str())
