"""Owner scale benchmark: many queues' trackers in one process; prints one JSON document.

    .venv/bin/python bench/scale.py [--queues 1,10,40] [--partitions 6,24,96] [--settle 5000]

For each Q x P, a fresh process hosts the RedeliveryTrackers of Q queues of P
partitions each (a process of its own, so one shape's threads, sockets and
memory are not the next one's, and a shape that fails cannot take the run
down) and reports:

- ``owned_s``: from starting the trackers until every partition is owned
  and caught up (its barrier read back);
- ``idle_cpu_pct``: the process's CPU over 5 s with nothing to do;
- ``threads``, ``sockets``, ``rss_mb``: what the process holds after those
  5 s, less what it held before the first tracker started;
- ``settle``: ``--settle`` messages sent over the queues and acked by a
  worker per queue; seconds until every tracker has seen every ack (in
  flight 0, nothing redelivered);
- ``threads_left``, ``sockets_left``: after every tracker was stopped (and
  up to 5 s for a thread that ends on its own).

Beside it, the same process shape for the plain baseline: one consumer group
over the same markers topics (``plain``: its join time, threads, sockets).
Then ``recovery`` (bench/recovery.py): how long a killed owner's open
transaction holds back read_committed readers, for both ownership designs.
"""

import argparse
import contextlib
import gc
import json
import multiprocessing
import os
import sys
import time
import uuid
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer

from bench.common import report, rss_bytes
from bench.recovery import recovery
from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, RedeliveryTracker

IDLE_S = 5.0
OWN_TIMEOUT_S = 180.0
SETTLE_TIMEOUT_S = 120.0
LEFT_WITHIN_S = 5.0


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # closed since listed
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return count


def cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def held(base: dict[str, int]) -> dict[str, float]:
    """What the process holds now beyond ``base``."""
    return {
        "threads": threads() - base["threads"],
        "sockets": sockets() - base["sockets"],
        "rss_mb": round((rss_bytes() - base["rss"]) / 2**20, 1),
    }


def baseline() -> dict[str, int]:
    gc.collect()  # the set-up's clients are not counted as held
    return {"threads": threads(), "sockets": sockets(), "rss": rss_bytes()}


def wait(condition: Callable[[], bool], timeout: float) -> float | None:
    """Seconds until ``condition``, or None if it did not hold within ``timeout``."""
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            return None
        time.sleep(0.05)
    return round(time.monotonic() - began, 2)


def new_queues(bootstrap: str, queues: int, partitions: int) -> list[QueueConfig]:
    run = uuid.uuid4().hex[:6]
    configs = []
    for q in range(queues):
        config = QueueConfig(
            bootstrap_servers=bootstrap,
            topic=f"scale-{run}-{q}",
            group_id=f"scale-{run}-{q}-workers",
            message_timeout_ms=60_000,
        )
        config.ensure_topics(partitions=partitions)
        configs.append(config)
    return configs


def settle(configs: list[QueueConfig], trackers: list[RedeliveryTracker], total: int) -> dict:
    """``total`` messages over the queues, every one acked by the queue's worker."""
    per_queue = [total // len(configs) + (q < total % len(configs)) for q in range(len(configs))]
    for config, n in zip(configs, per_queue, strict=True):
        producer = QueueProducer(config)
        for i in range(n):
            producer.send(b"m%d" % i)
        producer.flush()
        producer.close()
    began = time.monotonic()
    for config, n in zip(configs, per_queue, strict=True):
        with QueueClient(config) as client:
            got = 0
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while got < n and time.monotonic() < deadline:
                for message in client.poll(timeout=0.5):
                    client.ack(message)
                    got += 1
            client.flush()
    acked = wait(
        lambda: (
            sum(t.stats().acked for t in trackers) >= total
            and all(t.stats().in_flight == 0 for t in trackers)
        ),
        SETTLE_TIMEOUT_S,
    )
    stats = [t.stats() for t in trackers]
    return {
        "messages": total,
        "acked": sum(s.acked for s in stats),
        "in_flight": sum(s.in_flight for s in stats),
        "redelivered": sum(s.redelivered for s in stats),
        "settled_s": None if acked is None else round(time.monotonic() - began, 2),
    }


def delete_queues(configs: list[QueueConfig]) -> None:
    """A shape's topics go once it is measured: the next shapes' broker
    holds only theirs (40 x 96 is 11,520 partitions already)."""
    admin = admin_client(configs[0].bootstrap_servers)
    names = [name for config in configs for name in config.topics()]
    for future in admin.delete_topics(names, operation_timeout=60).values():
        future.result()


def trackers_shape(configs: list[QueueConfig], partitions: int, total: int) -> dict:
    """One process's figures for Q trackers of P partitions (runs in a child)."""
    base = baseline()
    shape = {"queues": len(configs), "partitions": partitions}
    result = shape | run_trackers(configs, partitions, base, total)
    gc.collect()  # what only the collector would free is not left behind
    # A thread that ends on its own (the idle-clients pump, within a second
    # of its last client) is not left behind either.
    wait(lambda: threads() <= base["threads"], LEFT_WITHIN_S)
    left = held(base)
    return result | {"threads_left": left["threads"], "sockets_left": left["sockets"]}


def run_trackers(
    configs: list[QueueConfig], partitions: int, base: dict[str, int], total: int
) -> dict:
    """Starts a tracker per queue, measures, and stops every one."""
    trackers = [RedeliveryTracker(config) for config in configs]
    for tracker in trackers:
        tracker.start()
    try:
        owned = wait(lambda: all(owns_all(t, partitions) for t in trackers), OWN_TIMEOUT_S)
        result: dict = {"owned_s": owned}
        if owned is not None:
            before = cpu_s()
            time.sleep(IDLE_S)
            result["idle_cpu_pct"] = round(100 * (cpu_s() - before) / IDLE_S, 1)
            result |= held(base)  # once every client has talked to the broker
            result["settle"] = settle(configs, trackers, total)
        else:
            result |= held(base)
        return result | {"restarts": sum(t.restarts for t in trackers)}
    finally:
        for tracker in trackers:
            tracker.stop()


def owns_all(tracker: RedeliveryTracker, partitions: int) -> bool:
    return len(tracker.owned_partitions()) == partitions and not tracker.loading_partitions()


def plain_shape(configs: list[QueueConfig], partitions: int) -> dict:
    """One consumer group over the same markers topics, joined and assigned."""
    queues, bootstrap = len(configs), configs[0].bootstrap_servers
    base = baseline()
    consumer = Consumer(consumer_config(bootstrap, f"scale-plain-{uuid.uuid4().hex[:6]}"))
    assigned: list[int] = []
    began = time.monotonic()
    consumer.subscribe(
        [c.markers_topic for c in configs], on_assign=lambda c, tps: assigned.extend(tps)
    )
    while len(assigned) < queues * partitions and time.monotonic() - began < OWN_TIMEOUT_S:
        consumer.poll(0.05)
    result = {"joined_s": round(time.monotonic() - began, 2), **held(base)}
    consumer.close()
    left = held(base)
    result["threads_left"], result["sockets_left"] = left["threads"], left["sockets"]
    return result


def _child(conn: Connection, shape: Callable[..., dict], args: tuple) -> None:
    try:
        conn.send(shape(*args))
    except Exception as exc:  # reported, not raised: the next shape still runs
        conn.send({"error": f"{type(exc).__name__}: {exc}"})


def in_child(shape: Callable[..., dict], *args: object) -> dict:
    """``shape(*args)`` in a fresh process; its crash is a figure too."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(child, shape, args))
    process.start()
    child.close()
    timeout = OWN_TIMEOUT_S + SETTLE_TIMEOUT_S * 2 + 60
    got = parent.recv() if parent.poll(timeout) else {"error": f"no answer in {timeout:.0f} s"}
    process.join(30)
    if process.exitcode is None:
        process.kill()
    return got


def scale(queues: list[int], partitions: list[int], total: int) -> Callable[[str], list]:
    def section(bootstrap: str) -> list:
        rows = []
        for q in queues:
            for p in partitions:
                configs = new_queues(bootstrap, q, p)
                try:
                    row = {
                        "trackers": in_child(trackers_shape, configs, p, total),
                        "plain": in_child(plain_shape, configs, p),
                    }
                finally:
                    delete_queues(configs)
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
        return rows

    return section


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queues", type=_ints, default=[1, 10, 40])
    parser.add_argument("--partitions", type=_ints, default=[6, 24, 96])
    parser.add_argument("--settle", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3, help="kills per recovery case")
    args = parser.parse_args()
    report(
        {
            "scale": scale(args.queues, args.partitions, args.settle),
            "recovery": recovery(args.rounds),
        }
    )
