"""The headers of one undecodable record, in hex, for a person looking at it.

confluent-kafka cannot decode them (kafka/client/record.py), so they are read
again as bytes below it (kafka/inspect/raw_record.py): a client set-up per
call, hence only on the pages of one record. A read that fails or times out is
said on the page, which still answers.
"""

import logging
from dataclasses import dataclass, field

from kmqadmin.kafka.client.librdkafka import LibrdkafkaError
from kmqadmin.kafka.inspect import raw_record
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kmq import QueueConfig

logger = logging.getLogger(__name__)

TIMEOUT_S = 5.0
SHOWN_BYTES = 1024  # of each name and value


@dataclass(frozen=True)
class RawHeaders:
    """(name hex, value hex or None for a null value) pairs, or why not."""

    rows: list[tuple[str, str | None]] = field(default_factory=list)
    error: str = ""


def raw_headers(
    config: QueueConfig, topic: str, partition: int, offset: int, masking: MaskRules | None = None
) -> RawHeaders:
    """``masking``: the rules of a masked audience, applied before the hex."""
    try:
        found = raw_record.read_headers(
            config.bootstrap_servers, config.kafka_config, topic, partition, offset, TIMEOUT_S
        )
    except LibrdkafkaError as exc:
        logger.warning("raw headers of %s/%d/%d: %s", topic, partition, offset, exc)
        return RawHeaders(error=str(exc))
    if masking is not None:
        found = masking.raw_header_values(found)
    return RawHeaders(rows=[(_hex(name), None if v is None else _hex(v)) for name, v in found])


def _hex(data: bytes) -> str:
    more = f" … ({len(data)} bytes)" if len(data) > SHOWN_BYTES else ""
    return data[:SHOWN_BYTES].hex() + more
