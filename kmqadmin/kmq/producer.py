"""QueueProducer: a plain idempotent producer that stamps each message's kmq-id."""

from collections.abc import Mapping

from confluent_kafka import KafkaException, Producer

from kmqadmin.kafka.config import producer_config

from .config import QueueConfig


class QueueProducer:
    """Sends messages to the queue topic.

    kmq-id is ``<topic>/<partition>/<offset>`` of the first copy, which only
    the broker knows; so it is absent on the first copy and readers derive it
    from the record's coordinates (Message.id does). Copies carry it.
    """

    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._producer = Producer(
            producer_config(config.bootstrap_servers, extra=config.kafka_config)
        )
        self._errors: list[str] = []

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
            on_delivery=self._delivered,
            **kwargs,
        )
        self._producer.poll(0)

    def flush(self, timeout: float = 30.0) -> None:
        """Waits for every send; raises if any failed, so none is lost silently."""
        remaining = self._producer.flush(timeout)
        if remaining:
            raise KafkaException(f"{remaining} messages not delivered within {timeout} s")
        if self._errors:
            errors, self._errors = self._errors, []
            raise KafkaException(f"{len(errors)} messages failed: {errors[0]}")

    def _delivered(self, err: object, msg: object) -> None:
        if err is not None:
            self._errors.append(str(err))
