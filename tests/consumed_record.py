"""A stand-in for a record a consumer returned, for pure logic tested
without a broker (tracker state, schedules applied, decoders)."""

from dataclasses import dataclass, field

from confluent_kafka import KafkaError


@dataclass
class ConsumedRecord:
    partition_: int
    offset_: int
    key_: bytes | None
    value_: bytes | None
    timestamp_: int = 0
    error_: KafkaError | None = None
    headers_: list = field(default_factory=list)
    topic_: str = "topic"

    def error(self) -> KafkaError | None:
        return self.error_

    def topic(self) -> str:
        return self.topic_

    def partition(self) -> int:
        return self.partition_

    def offset(self) -> int:
        return self.offset_

    def key(self) -> bytes | None:
        return self.key_

    def value(self) -> bytes | None:
        return self.value_

    def headers(self) -> list:
        return self.headers_

    def timestamp(self) -> tuple[int, int]:
        return 1, self.timestamp_
