"""A known story, written record by record with chosen timestamps, so the
facts and aggregates it must give can be worked out by hand.

All on partition 0 of each topic, in this order; T is a minute boundary.

  offset  message                                  markers (time, kind)
  0  A    produced T                               T+1s start, T+3s end: ack
  1  B    produced T+0.5s                          T+1s start, T+31s end: redelivery
  2  C    produced T+1s                            T+2s start, T+4s reject, T+4s end: DLQ
  3  B    copy 1 (count 1) at T+31s                T+32s start, T+62s end: redelivery
  4  D    produced T+2s                            T+70s start, no end: in flight
  5  B    copy 2 (count 2) at T+62s                T+63s start, T+65s end: ack
  6  C    sent again (redrive) at T+120s           T+121s start, T+125s end: ack
  7-9 E1-3 produced T+3s                            T+4s start, ends T+5s, T+5s, T+20s: acks
  C's dead letter (original timestamp T+1s, reason "rejected"); one marker
  whose key is 5 bytes (skipped, counted).

The markers topic holds both formats, as after a queue's format is
switched: A's and B's starts are one compact START_RANGE, as are E1-E3's,
and E1's and E2's acks one END_RANGE; the rest are kmq's records.

The first part is offsets 0-5 with their markers up to T+65s; the second
adds C's redrive and the Es, for the streaming test.
"""

import pytest
from confluent_kafka import Producer

from kmqadmin.kmq import headers, markers
from kmqadmin.pipeline.events import QueueTopics

T = 1_767_261_600_000  # 2026-01-01T10:00:00Z
# A compact range is an event per offset it covers: both parts' ranges give
# this many events more than they have records (A+B, E1-E3, E1+E2).
RANGE_EVENTS_BEYOND_RECORDS = 1 + 2 + 1
MINUTE = 60_000


def _id(queue: QueueTopics, offset: int) -> bytes:
    return headers.message_id(queue.queue, 0, offset).encode()


def write(bootstrap: str, queue: QueueTopics, part: int) -> int:
    """Writes part 1 or 2; returns how many records it wrote."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    count = 0

    def send(topic: str, key: bytes | None, value: bytes, at: int, hdrs=None) -> None:
        nonlocal count
        producer.produce(topic, key=key, value=value, partition=0, timestamp=T + at, headers=hdrs)
        producer.flush(10)  # one at a time: offsets in the order written
        count += 1

    def marker(offset: int, value: bytes, at: int) -> None:
        send(queue.markers, markers.encode_key(0, offset), value, at)

    def copy(of: int, n: int | None, at: int) -> None:
        hdrs = [(headers.MESSAGE_ID, _id(queue, of))]
        if n is not None:
            hdrs.append((headers.REDELIVERY_COUNT, headers.encode_count(n)))
        send(queue.queue, None, b"payload", at, hdrs)

    if part == 1:
        for at in (0, 500, 1000):  # A, B, C
            send(queue.queue, None, b"payload", at)
        copy(1, 1, 31_000)  # B copy 1: offset 3
        send(queue.queue, None, b"payload", 2000)  # D: offset 4
        copy(1, 2, 62_000)  # B copy 2: offset 5
        marker(0, markers.start_range(T + 31_000, 1), 1000)  # A and B
        marker(2, markers.start(T + 32_000), 2000)
        marker(0, markers.END, 3000)
        marker(2, markers.reject("bad"), 4000)
        send(
            queue.dlq,
            None,
            b"payload",
            1000,
            [(headers.MESSAGE_ID, _id(queue, 2)), (headers.DLQ_REASON, b"rejected")],
        )
        marker(2, markers.END, 4000)
        send(queue.markers, b"short", markers.END, 4500)
        marker(1, markers.END, 31_000)
        marker(3, markers.start(T + 62_000), 32_000)
        marker(3, markers.END, 62_000)
        marker(5, markers.start(T + 93_000), 63_000)
        marker(5, markers.END, 65_000)
        marker(4, markers.start(T + 100_000), 70_000)
    else:
        copy(2, None, 120_000)  # C sent again: offset 6
        for _ in range(3):
            send(queue.queue, None, b"payload", 3000)  # E1-E3: offsets 7-9
        marker(7, markers.start_range(T + 34_000, 9), 4000)
        marker(7, markers.end_range(8), 5000)
        marker(9, markers.END, 20_000)
        marker(6, markers.start(T + 151_000), 121_000)
        marker(6, markers.END, 125_000)
    return count


def fact(
    queue: QueueTopics, offset: int, produced: int, starts, state, ended=None, reason=None, copies=1
):
    """A fact row as the pipeline must write it."""
    return {
        "queue": queue.queue,
        "kmq_id": _id(queue, offset).decode(),
        "offset": offset,
        "produced_ms": T + produced,
        "timestamp_type": "CreateTime",
        "delivery_starts": [T + s for s in starts],
        "deliveries": len(starts),
        "copies": copies,
        "acked_ms": T + ended if state == "acked" else None,
        "dead_lettered_ms": T + ended if state == "dead-lettered" else None,
        "state": state,
        "dlq_reason": reason,
    }


def facts(queue: QueueTopics) -> dict[str, dict]:
    """The facts of both parts, by kmq-id."""
    expected = [
        fact(queue, 0, 0, [1000], "acked", 3000),
        fact(queue, 1, 500, [1000, 32_000, 63_000], "acked", 65_000, copies=3),
        fact(queue, 2, 1000, [2000, 121_000], "acked", 125_000, "rejected", copies=2),
        fact(queue, 4, 2000, [70_000], "in flight"),
        fact(queue, 7, 3000, [4000], "acked", 5000),
        fact(queue, 8, 3000, [4000], "acked", 5000),
        fact(queue, 9, 3000, [4000], "acked", 20_000),
    ]
    return {row["kmq_id"]: row for row in expected}


def _quantiles(kind: str, *values: float) -> dict[str, float]:
    return {f"{kind}_p{p}_ms": v for p, v in zip((50, 95, 99), values, strict=True)}


# The minutes of both parts, by ms after T. Minute 0: acks of A (3 s latency,
# 2 s processing) and E1-E3 (2/2/17 s, 1/1/16 s); Spark's percentile
# interpolates linearly between ranks. Minute 1: B's ack; minute 2: C's,
# after its redrive (a copy, not a produce).
MINUTES = {
    0: {
        "produced": 7,
        "acked": 4,
        "redelivered": 1,
        "dead_lettered": 1,
        **_quantiles("latency", 2500.0, 14_900.0, 16_580.0),
        **_quantiles("processing", 1500.0, 13_900.0, 15_580.0),
    },
    MINUTE: {
        "produced": 0,
        "acked": 1,
        "redelivered": 1,
        "dead_lettered": 0,
        **_quantiles("latency", 64_500.0, 64_500.0, 64_500.0),
        **_quantiles("processing", 2000.0, 2000.0, 2000.0),
    },
    2 * MINUTE: {
        "produced": 0,
        "acked": 1,
        "redelivered": 0,
        "dead_lettered": 0,
        **_quantiles("latency", 124_000.0, 124_000.0, 124_000.0),
        **_quantiles("processing", 4000.0, 4000.0, 4000.0),
    },
}


def assert_minutes(minutes: dict[int, dict]) -> None:
    """``minutes`` (by ms after T) are the story's."""
    assert set(minutes) == set(MINUTES)
    for at, row in MINUTES.items():
        assert minutes[at] == pytest.approx(row), at
