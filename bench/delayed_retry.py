"""Delayed retries on a share queue; prints one JSON document.

    .venv/bin/python bench/delayed_retry.py [--messages 200] [--backoff-ms 1000] [--every-ms 10]

A released message on a share queue with a backoff is written to the
queue's schedules topic and comes back through its scheduler once the
backoff has passed. Lateness is the time the worker's poll returns the copy
minus (the time it released the original + the backoff); a plain producer
writes the originals one every ``--every-ms``, and the worker releases each
as it polls it, so the copies fall due as a stream. Beside it, from
the same run on the same broker and the same kind of client: the plain
delivery latency of a share queue, from writing a record until a poll
returns it; the part of a retry's lateness that is not the scheduler's.

The target (issue 27 moved it here from a timed test): p99 lateness at most
100 ms on an idle broker.
"""

import argparse
import sys
import time
import uuid
from pathlib import Path
from threading import Thread

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer

from bench.common import quantiles, report
from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq import Backoff, QueueClient, QueueConfig
from kmqadmin.scheduler import Scheduler

TARGET_P99_MS = 100
POLL_TIMEOUT_S = 0.01  # short polls: the figure is the broker's and ours, not a poll's wait
GIVE_UP_S = 60


def new_queue(bootstrap: str, backoff_ms: int) -> QueueConfig:
    topic = f"delayed-{uuid.uuid4().hex[:8]}"
    queue = QueueConfig(
        bootstrap_servers=bootstrap,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=30_000,
        max_redeliveries=3,
        backend="share",
        backoff=Backoff(initial_ms=backoff_ms, max_ms=backoff_ms),
    )
    queue.ensure_topics(partitions=1)
    return queue


def plain_delivery_ms(queue: QueueConfig, client: QueueClient, n: int) -> list[float]:
    """One record at a time: written, then polled for until it is returned."""
    producer = Producer(producer_config(queue.bootstrap_servers, extra={"linger.ms": 0}))
    took: list[float] = []
    for i in range(n):
        written = time.monotonic()
        producer.produce(queue.topic, value=b"plain-%d" % i)
        producer.flush(10)
        for message in poll_for(client, 1):
            took.append((time.monotonic() - written) * 1000)
            client.ack(message)
    client.flush()
    return sorted(took)


def retry_lateness_ms(
    queue: QueueConfig, client: QueueClient, n: int, every_ms: int
) -> tuple[list[float], list[float]]:
    """A record written every ``every_ms``, each released as it is first
    polled. For each copy: its lateness, and the part of it before the
    scheduler fired it (the copy's CreateTime, stamped when fired, against
    the release's wall clock)."""
    writer = Thread(target=write_spread, args=(queue, n, every_ms), daemon=True)
    writer.start()
    backoff = queue.backoff.initial_ms
    released: dict[bytes, tuple[float, float]] = {}
    late: list[float] = []
    fired: list[float] = []
    deadline = time.monotonic() + GIVE_UP_S + (backoff + n * every_ms) / 1000
    while len(late) < n and time.monotonic() < deadline:
        for message in client.poll(n, POLL_TIMEOUT_S):
            if message.delivery_count == 1:
                released[message.value] = (time.monotonic(), time.time() * 1000)
                client.release(message)
            else:
                at, wall_ms = released[message.value]
                late.append((time.monotonic() - at) * 1000 - backoff)
                fired.append(message.timestamp - wall_ms - backoff)
                client.ack(message)
    client.flush()
    writer.join()
    if len(late) < n:
        raise TimeoutError(f"{n - len(late)} of {n} delayed copies never came back")
    return sorted(late), sorted(fired)


def write_spread(queue: QueueConfig, n: int, every_ms: int) -> None:
    producer = Producer(producer_config(queue.bootstrap_servers, extra={"linger.ms": 0}))
    start = time.monotonic()
    for i in range(n):
        time.sleep(max(0.0, start + i * every_ms / 1000 - time.monotonic()))
        producer.produce(queue.topic, value=b"retry-%d" % i)
        producer.poll(0)
    producer.flush(10)


def poll_for(client: QueueClient, n: int) -> list:
    got: list = []
    deadline = time.monotonic() + GIVE_UP_S
    while len(got) < n and time.monotonic() < deadline:
        got.extend(client.poll(n - len(got), POLL_TIMEOUT_S))
    if len(got) < n:
        raise TimeoutError(f"{n - len(got)} of {n} records never delivered")
    return got


def wait_owned(scheduler: Scheduler) -> None:
    """Until the scheduler owns its partitions and has read them: a copy due
    before that waits for ownership, which is not what is measured here."""
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        stats = scheduler.stats()
        if stats.partitions and not stats.loading:
            return
        time.sleep(0.05)
    raise TimeoutError("the scheduler never owned its partitions")


def run(bootstrap: str, messages: int, backoff_ms: int, every_ms: int) -> dict:
    queue = new_queue(bootstrap, backoff_ms)
    scheduler = Scheduler(queue.scheduler_config())
    scheduler.start()
    try:
        wait_owned(scheduler)
        with QueueClient(queue) as client:
            plain_delivery_ms(queue, client, 1)  # joins the share group first
            plain = plain_delivery_ms(queue, client, messages)
            late, fired = retry_lateness_ms(queue, client, messages, every_ms)
    finally:
        scheduler.stop()
    return {
        "messages": messages,
        "backoff_ms": backoff_ms,
        "released_every_ms": every_ms,
        "plain_share_delivery": quantiles(plain),
        "retry_lateness": {**quantiles(late), "min_ms": round(late[0], 1)},
        "of_which_until_fired": quantiles(fired),
        "target_p99_ms": TARGET_P99_MS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--backoff-ms", type=int, default=1000)
    parser.add_argument("--every-ms", type=int, default=10)
    args = parser.parse_args()
    report({"delayed_retry": lambda b: run(b, args.messages, args.backoff_ms, args.every_ms)})


if __name__ == "__main__":
    main()
