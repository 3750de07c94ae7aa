"""Offset ranges: which records of which Kafka partitions a read covers.

Spark's own Kafka source takes ``startingOffsets`` / ``endingOffsets`` (JSON
or earliest / latest) and ``startingTimestamp``; our data source takes the
same options with the same meaning, so a job sets them once whichever source
runs it. Resolving them needs the broker (watermarks, offsets_for_times) and
happens on the driver, once per batch or micro-batch.
"""

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from kmqadmin.kafka.admin.stretch import OffsetRange
from kmqadmin.kafka.admin.topics import topic_partitions

# JSON form of an offset map, as Spark's Kafka source writes it: {"topic": {"0": 42}}.
Offsets = dict[str, dict[str, int]]

EARLIEST, LATEST = "earliest", "latest"

# In JSON offsets, as in Spark's Kafka source: -2 the earliest, -1 the latest.
JSON_EARLIEST, JSON_LATEST = -2, -1


def parse_offsets(spec: str | None, default: str) -> str | Offsets:
    """``earliest``, ``latest`` or a JSON offset map; a clear error otherwise."""
    text = (spec or default).strip()
    if text in (EARLIEST, LATEST):
        return text
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"offsets must be earliest, latest or JSON, got {text!r}: {exc}") from None
    if not isinstance(parsed, dict) or not all(isinstance(v, dict) for v in parsed.values()):
        raise ValueError(f'offsets JSON must look like {{"topic": {{"0": 42}}}}, got {text!r}')
    return {topic: {str(p): int(o) for p, o in parts.items()} for topic, parts in parsed.items()}


class RangeResolver:
    """Turns starting / ending specs into offsets, with one assign-only
    consumer (its group is never joined or committed)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._consumer = Consumer({**config, "enable.partition.eof": False})

    def close(self) -> None:
        self._consumer.close()

    def partitions(self, topics: Iterable[str]) -> list[TopicPartition]:
        return [
            TopicPartition(topic, p)
            for topic in topics
            for p in sorted(topic_partitions(self._consumer, topic))
        ]

    def starts(
        self, parts: list[TopicPartition], spec: str | Offsets, timestamp_ms: int | None
    ) -> Offsets:
        """Where each partition's read begins: the spec, or the first offset
        at or after ``timestamp_ms`` when one is given (startingTimestamp)."""
        if timestamp_ms is not None:
            return self._at_time(parts, timestamp_ms)
        if isinstance(spec, dict):
            earliest = self._watermarks(parts, low=True)
            return _merged(spec, earliest, earliest, functools.cache(lambda: self.latest(parts)))
        return self._watermarks(parts, low=spec == EARLIEST)

    def ends(self, parts: list[TopicPartition], spec: str | Offsets) -> Offsets:
        latest = self.latest(parts)
        if isinstance(spec, dict):
            return _merged(spec, latest, self._watermarks(parts, low=True), lambda: latest)
        return latest

    def latest(self, parts: list[TopicPartition]) -> Offsets:
        """Each partition's end as Apache Kafka reports it to a reader of our
        isolation level (read_committed unless ``kafka.isolation.level`` says
        otherwise): the last stable offset, which is the high watermark while
        no transaction is open. Records of an open transaction wait for the
        range after it ends, as in Spark's source at the same level."""
        return self._watermarks(parts, low=False)

    def _watermarks(self, parts: list[TopicPartition], low: bool) -> Offsets:
        found: Offsets = {}
        for tp in parts:
            lo, hi = self._consumer.get_watermark_offsets(tp, timeout=10)
            found.setdefault(tp.topic, {})[str(tp.partition)] = lo if low else hi
        return found

    def _at_time(self, parts: list[TopicPartition], timestamp_ms: int) -> Offsets:
        wanted = [TopicPartition(tp.topic, tp.partition, timestamp_ms) for tp in parts]
        answers = self._consumer.offsets_for_times(wanted, timeout=10)
        ends = self._watermarks(parts, low=False)
        found: Offsets = {}
        for tp in answers:
            # -1: no record that late, so the read starts at the end.
            end = ends[tp.topic][str(tp.partition)]
            found.setdefault(tp.topic, {})[str(tp.partition)] = end if tp.offset < 0 else tp.offset
        return found


def _merged(
    spec: Offsets, default: Offsets, earliest: Offsets, latest: Callable[[], Offsets]
) -> Offsets:
    """``spec``'s offsets where it names the partition, ``default``'s elsewhere."""
    merged: Offsets = {}
    for topic, parts in default.items():
        for partition, offset in parts.items():
            wanted = spec.get(topic, {}).get(partition, offset)
            if wanted == JSON_EARLIEST:
                wanted = earliest[topic][partition]
            elif wanted == JSON_LATEST:
                wanted = latest()[topic][partition]
            merged.setdefault(topic, {})[partition] = wanted
    return merged


def ranges(starts: Offsets, ends: Offsets) -> list[OffsetRange]:
    """One range per partition that has records between start and end."""
    found = []
    for topic, parts in ends.items():
        for partition, end in parts.items():
            start = starts.get(topic, {}).get(partition, 0)
            if end > start:
                found.append(OffsetRange(topic, int(partition), start, end))
    return found
