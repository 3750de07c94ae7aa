"""Finding a message from the nav's search box: by kmq-id, or by key.

A kmq-id (``topic/partition/offset``) names its queue: the answer is that
message's page. A key is looked for in a bounded window only, the newest
WINDOW records of each registered queue's topic, never a scan of a whole
topic; the page says how far it looked.
"""

import uuid
from dataclasses import dataclass

from confluent_kafka import KafkaException
from confluent_kafka import Message as KafkaMessage

from kmqadmin.console.models import Queue
from kmqadmin.console.services.browsing.masking import masking_for_role
from kmqadmin.console.services.roles import Role
from kmqadmin.kafka.admin.offset_reader import OffsetReader, ReadTimeout
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kafka.client.record import UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kmq import headers as h

WINDOW = 1_000  # newest records read per queue topic
HITS = 50  # at most this many listed
MAX_QUERY = 1_000  # characters; a kmq-id is at most ~290, keys are short
READ_TIMEOUT_S = 5.0


class BadQuery(ValueError):
    """What the box held cannot name a message; the message says why."""


@dataclass(frozen=True)
class Hit:
    queue: Queue
    partition: int
    offset: int
    message_id: str
    timestamp_ms: int


@dataclass(frozen=True)
class KeyResults:
    hits: list[Hit]
    searched: list[Queue]
    errors: dict[str, str]  # queue topic -> why it was not searched


def checked(query: str) -> str:
    """The query stripped; BadQuery when it is empty, too long or not text."""
    query = query.strip()
    if not query:
        raise BadQuery("type a kmq-id (topic/partition/offset) or a message key")
    if len(query) > MAX_QUERY:
        raise BadQuery(f"at most {MAX_QUERY} characters, got {len(query)}")
    if not query.isprintable():
        raise BadQuery("the query holds control characters")
    return query


def queues_of_id(query: str) -> list[Queue]:
    """The registered queues a kmq-id's topic names (one per cluster);
    empty when the query is no kmq-id, or names no registered queue."""
    parsed = h.parse_message_id(query)
    if parsed is None:
        return []
    return list(Queue.objects.select_related("cluster").filter(topic=parsed[0]))


def by_key(key: str, role: Role) -> KeyResults:
    """Records whose key is exactly ``key``, newest first, in the window.
    A masked audience matches the keys as it sees them (masked), so a
    search cannot confirm a key its pages hide."""
    wanted = key.encode()
    hits: list[Hit] = []
    searched: list[Queue] = []
    errors: dict[str, str] = {}
    for queue in Queue.objects.select_related("cluster"):
        try:
            records = _newest(queue)
        except (KafkaException, KafkaSetupError, ReadTimeout) as exc:
            errors[str(queue)] = str(exc)
            continue
        searched.append(queue)
        masking = masking_for_role(role, queue)
        for record in records:
            shown = record.key() if masking is None else masking.key(record.key())
            if shown == wanted:
                hits.append(_hit(queue, record))
    hits.sort(key=lambda hit: hit.timestamp_ms, reverse=True)
    return KeyResults(hits[:HITS], searched, errors)


def _newest(queue: Queue) -> list[KafkaMessage]:
    config = queue.config()
    group = f"{config.group_id}__search-{uuid.uuid4().hex[:8]}"  # assign-only, never joined
    reader = OffsetReader(
        config.bootstrap_servers, config.topic, group, config.kafka_config, READ_TIMEOUT_S
    )
    try:
        return reader.newest(WINDOW)
    finally:
        reader.close()


def _hit(queue: Queue, record: KafkaMessage) -> Hit:
    """A record whose headers do not decode is named by its coordinates."""
    topic, partition, offset = record.topic(), record.partition(), record.offset()
    try:
        found = read_headers(record)
    except UndecodableRecord:
        found = None
    message_id = h.stable_id(found, topic, partition, offset).decode()
    return Hit(queue, partition, offset, message_id, record.timestamp()[1])
