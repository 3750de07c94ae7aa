"""QueueProducer: a plain idempotent producer that stamps each message's kmq-id."""

from collections.abc import Mapping

from kmqadmin.kafka.checked_producer import CheckedProducer

from .config import QueueConfig


class QueueProducer:
    """Sends messages to the queue topic.

    kmq-id is ``<topic>/<partition>/<offset>`` of the first copy, which only
    the broker knows; so it is absent on the first copy and readers derive it
    from the record's coordinates (Message.id does). Copies carry it.
    """

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._producer = CheckedProducer(config.bootstrap_servers, config.kafka_config)

    def send(
        self,
        value: bytes | None,
        key: bytes | None = None,
        headers: Mapping[str, bytes] | None = None,
        partition: int | None = None,
    ) -> None:
        kwargs = {} if partition is None else {"partition": partition}
        self._producer.produce(
            self.config.topic,
            value=value,
            key=key,
            headers=list((headers or {}).items()),
            **kwargs,
        )

    def flush(self, timeout: float = 30.0) -> None:
        """Waits for every send; raises if any failed, so none is lost silently."""
        self._producer.flush(timeout)

    def close(self) -> None:
        self._producer.close()
