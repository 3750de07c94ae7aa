"""QueueProducer: a plain idempotent producer that stamps each message's kmq-id."""

from collections.abc import Mapping, Sequence

from kmqadmin.kafka.client.checked_producer import CheckedProducer, Report
from kmqadmin.kmq.config import QueueConfig


class QueueProducer:
    """Sends messages to the queue topic.

    kmq-id is ``<topic>/<partition>/<offset>`` of the first copy, which only
    the broker knows; so it is absent on the first copy and readers derive it
    from the record's coordinates (Message.id does). Copies carry it.
    """

    def __init__(self, config: QueueConfig, *, confirm_each: bool = False) -> None:
        """``confirm_each``: for ``send_confirmed`` (kafka.client.checked_producer)."""
        self.config = config
        self._producer = CheckedProducer(
            config.bootstrap_servers, config.kafka_config, confirm_each=confirm_each
        )

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

    def send_confirmed(
        self,
        value: bytes,
        key: bytes | None = None,
        headers: Mapping[str, bytes] | None = None,
        partition: int | None = None,
        timeout: float = 10.0,
        later: Report | None = None,
    ) -> tuple[int, int]:
        """One message, waited for: its (partition, offset), which make its
        kmq-id. OutcomeUnknown past ``timeout``; ``later`` gets the report
        that comes after it."""
        kwargs = {} if partition is None else {"partition": partition}
        delivered = self._producer.produce_confirmed(
            self.config.topic,
            timeout,
            later,
            value=value,
            key=key,
            headers=list((headers or {}).items()),
            **kwargs,
        )
        return delivered.partition(), delivered.offset()

    def send_all_confirmed(
        self,
        messages: Sequence[tuple[bytes, bytes | None, Mapping[str, bytes]]],
        timeout: float = 10.0,
    ) -> list[tuple[int, int] | Exception]:
        """(value, key, headers)s sent and waited for together: each one's
        (partition, offset), or the exception it failed with (OutcomeUnknown
        when no report came within ``timeout``)."""
        records = [
            {"value": value, "key": key, "headers": list(headers.items())}
            for value, key, headers in messages
        ]
        outcomes = self._producer.produce_all_confirmed(self.config.topic, records, timeout)
        return [o if isinstance(o, Exception) else (o.partition(), o.offset()) for o in outcomes]

    def partitions(self) -> list[int]:
        return self._producer.partitions(self.config.topic)

    def flush(self, timeout: float = 30.0) -> None:
        """Waits for every send; raises if any failed, so none is lost silently."""
        self._producer.flush(timeout)

    def close(self) -> None:
        self._producer.close()
