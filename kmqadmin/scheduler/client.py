"""ScheduleClient: writes schedule versions and tombstones."""

from collections.abc import Mapping

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.client.clock import When, epoch_ms
from kmqadmin.scheduler import wire
from kmqadmin.scheduler.config import SchedulerConfig


class ScheduleClient:
    """An idempotent producer of schedule records; the latest version of an id wins."""

    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self._producer = CheckedProducer(config.bootstrap_servers, config.kafka_config)

    def schedule(
        self,
        id: str | bytes,
        at: When,
        target_topic: str,
        value: bytes,
        target_key: bytes | None = None,
        headers: Mapping[str, bytes | str] | None = None,
    ) -> None:
        """Writes a version of schedule ``id``: ``value`` goes to ``target_topic``
        at ``at``. Headers pass through to the fired record."""
        if value is None:
            raise ValueError("value must be bytes: a null value is a tombstone (use cancel)")
        passed = [(k, v.encode() if isinstance(v, str) else v) for k, v in (headers or {}).items()]
        headers_out = wire.schedule_headers(epoch_ms(at), target_topic, target_key, passed)
        self._produce(_key(id), value, headers_out)

    def reschedule(self, record: KafkaMessage, at: When) -> None:
        """A new version of the schedule ``record``, due at ``at`` and otherwise
        the same (payload, target, headers): how "fire now" is done."""
        if record.key() is None or record.value() is None:
            raise ValueError("not a schedule: no key, or a tombstone")
        kept = [(k, v) for k, v in wire.headers_of(record) if k != wire.EPOCH]
        epoch = [(wire.EPOCH, wire.encode_epoch(epoch_ms(at)))]
        self._produce(record.key(), record.value(), epoch + kept)

    def cancel(self, id: str | bytes) -> None:
        """Writes the tombstone of ``id``: it will not fire."""
        self._produce(_key(id), None, None)

    def flush(self, timeout: float = 30.0) -> None:
        """Waits until every record written so far is acknowledged; raises if any failed."""
        self._producer.flush(timeout)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._producer.close()

    def __enter__(self) -> "ScheduleClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _produce(self, key: bytes, value: bytes | None, headers: wire.Headers | None) -> None:
        self._producer.produce(self.config.topic, key=key, value=value, headers=headers)


def _key(id: str | bytes) -> bytes:
    """An id as text (UTF-8 on the wire), or the key bytes as a producer wrote them."""
    if not id:
        raise ValueError("a schedule needs an id")
    return id if isinstance(id, bytes) else id.encode()
