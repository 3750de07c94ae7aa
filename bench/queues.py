"""Queue backends head to head; prints one JSON document.

    .venv/bin/python bench/queues.py [--messages 200000] [--quick]

Acknowledged messages per second for a plain consumer group committing per
batch, our kmq backend (its tracker running), our share backend, and
confluent-kafka's bare ShareConsumer (explicit mode: acknowledge each,
commit per poll); with 1 and 4 consumer processes, on a 4-partition and a
1-partition topic, 100 B and 1 KB records. Then produce → ack latency at
half the slowest one's rate, and the head-of-line case: one record in every
``--slow-every`` takes ``--slow-ms``, done aside while the others are acked.

Every run gets a fresh topic and group. Its consumers join first, proven by
warm-up records each acknowledges; then the run's records are written in
one transaction, so all become visible at once (every consumer reads
committed records only) and the rate is records over the time from that
commit until the last acknowledgement is confirmed.
"""

import argparse
import math
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import ConsumerGroupState, Producer

from bench import slow_work
from bench.common import quantiles, report
from bench.kmq_core.filled_queues import fill
from bench.kmq_throughput import io_floor_consume
from bench.queue_systems import (
    KMQ_BATCH,
    KMQ_EACH,
    PLAIN,
    SHARE_BATCH,
    SHARE_CONSUMER,
    SHARE_EACH,
    SHARE_FAST,
    SYSTEMS,
    Target,
)
from bench.queue_workers import Job, Workers
from kmqadmin.kafka.admin import share_group_configs as share_group
from kmqadmin.kafka.admin.topics import admin_client, ensure_topics
from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq import QueueConfig, RedeliveryTracker

CONSUMERS = (1, 4)
PARTITIONS = (4, 1)
SIZES = (100, 1000)
JOIN_TIMEOUT_S = 60
SETTINGS = (
    "messages",
    "batch",
    "poll_timeout",
    "latency_s",
    "slow_every",
    "slow_ms",
    "slow_messages",
)


@dataclass(frozen=True)
class Shape:
    """One cell of the grid: the topic's partitions, record bytes, consumer processes."""

    partitions: int
    size: int
    consumers: int

    @property
    def key(self) -> str:
        return f"{self.partitions}p_{self.size}B_{self.consumers}c"


class Bench:
    """One broker, one pool of consumer processes, and the producers that feed runs."""

    def __init__(self, bootstrap: str, args: argparse.Namespace) -> None:
        self.bootstrap, self.args = bootstrap, args
        self.systems: list[str] = args.systems
        self.workers = Workers(max(args.consumers))
        self.admin = admin_client(bootstrap)
        self.producer = Producer(producer_config(bootstrap, extra={"linger.ms": 1}))
        self.filler = Producer(
            producer_config(
                bootstrap,
                transactional_id=f"bench-queues-{uuid.uuid4().hex}",
                extra={"linger.ms": 20, "batch.size": 1_000_000},
            )
        )
        self.filler.init_transactions()

    def close(self) -> None:
        self.workers.close()

    # --- one run -----------------------------------------------------------

    @contextmanager
    def target(self, system: str, partitions: int) -> Iterator[Target]:
        """A fresh topic and group for ``system``; for ours, the queue's topics
        too, and for kmq its tracker, running for the length of the run. The
        topics are deleted after it: a full run writes gigabytes."""
        name = f"bench-{uuid.uuid4().hex[:8]}"
        group = f"{name}-g"
        if system in (PLAIN, SHARE_CONSUMER):
            ensure_topics(self.bootstrap, {name: partitions})
            if system == SHARE_CONSUMER:
                # The group as our share backend's has it: from the earliest
                # offset, committed records only, the same lock duration.
                share_group.configure(QueueConfig(self.bootstrap, name, group))
            with self._deleting([name]):
                yield Target(self.bootstrap, name, group)
            return
        backend = "kmq" if system in (KMQ_EACH, KMQ_BATCH) else "share"
        mode = "batch_optimized" if system == SHARE_FAST else "record_limit"
        config = QueueConfig(self.bootstrap, name, group, backend=backend, share_acquire_mode=mode)
        with self._deleting(config.ensure_topics(partitions=partitions)):
            if backend == "share":
                yield Target(self.bootstrap, name, group, config)
                return
            tracker = RedeliveryTracker(config)
            tracker.start()
            try:
                yield Target(self.bootstrap, name, group, config)
            finally:
                tracker.stop()

    @contextmanager
    def _deleting(self, topics: list[str]) -> Iterator[None]:
        try:
            yield
        finally:
            for future in self.admin.delete_topics(topics).values():
                future.result(30)

    def join(self, jobs: list[Job], partitions: int) -> int:
        """Starts ``jobs`` and writes warm-up records until every consumer has
        joined; returns how many it wrote, all of them acknowledged."""
        self.workers.start(jobs)
        target, written = jobs[0].target, 0
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        while time.monotonic() < deadline:
            for partition in range(partitions):
                self.producer.produce(target.topic, b"warm-up", partition=partition)
            self.producer.flush(10)
            written += partitions
            time.sleep(0.1)
            if self.workers.acked() == written and self._joined(jobs, target):
                return written
        raise TimeoutError(
            f"{jobs[0].system}: {len(jobs)} consumers not joined in {JOIN_TIMEOUT_S} s"
        )

    def _joined(self, jobs: list[Job], target: Target) -> bool:
        if jobs[0].system in (SHARE_EACH, SHARE_BATCH, SHARE_FAST, SHARE_CONSUMER):
            # Share groups have no describe call in this client; every member
            # of one may be handed records of any partition, so each acks some.
            return all(self.workers.shared.acked[i] for i in range(len(jobs)))
        group = self.admin.describe_consumer_groups([target.group_id])[target.group_id].result(10)
        return group.state == ConsumerGroupState.STABLE and len(group.members) == len(jobs)

    def jobs(self, system: str, target: Target, consumers: int, **kwargs: object) -> list[Job]:
        job = Job(system, target, self.args.batch, self.args.poll_timeout, **kwargs)
        return [job] * consumers

    def throughput(self, system: str, shape: Shape, n: int, **kwargs: object) -> float:
        """Acknowledged records per second, over ``n`` records."""
        with self.target(system, shape.partitions) as target:
            jobs = self.jobs(system, target, shape.consumers, **kwargs)
            warm = self.join(jobs, shape.partitions)
            self.workers.measure()
            payload = b"x" * shape.size
            self.filler.begin_transaction()
            for i in range(n):
                _produce(self.filler, target.topic, payload, i % shape.partitions)
            self.filler.commit_transaction()
            visible = time.monotonic()
            results = self.workers.finish(warm + n, self.args.run_timeout)
        rate = n / (max(r.finished for r in results) - visible)
        _progress(f"{system} {shape.key} {kwargs or ''}: {rate:.0f} msgs/s")
        return rate

    def latency(self, system: str, shape: Shape, rate: float, **kwargs: object) -> dict:
        """Produce → ack at ``rate`` records/s for ``--latency-s`` seconds."""
        with self.target(system, shape.partitions) as target:
            jobs = self.jobs(system, target, shape.consumers, latency=True, **kwargs)
            warm = self.join(jobs, shape.partitions)
            self.workers.measure()
            sent = self._paced(target.topic, b"x" * shape.size, shape.partitions, rate)
            results = self.workers.finish(warm + sent, self.args.run_timeout)
        latencies = sorted(ms for r in results for ms in r.latencies_ms)
        figures = {"messages": len(latencies), **quantiles(latencies)}
        _progress(f"{system} {shape.key} at {rate:.0f} msgs/s {kwargs or ''}: {figures}")
        return figures

    def _paced(self, topic: str, payload: bytes, partitions: int, rate: float) -> int:
        started = time.monotonic()
        sent, total = 0, round(rate * self.args.latency_s)
        while sent < total:
            due = min(total, math.floor((time.monotonic() - started) * rate) + 1)
            for i in range(sent, due):
                _produce(self.producer, topic, payload, i % partitions)
            sent = due
            self.producer.poll(0)
            time.sleep(0.001)
        self.producer.flush(30)
        return sent

    def io_floor(self, shape: Shape, batch_ends: bool) -> float:
        """bench/kmq_throughput.py's I/O floor for the kmq design (one consumer,
        in this process) on ``shape``'s topic and records, at this bench's
        batch, with a tracker reading its markers as our kmq runs have one:
        on 2 cores the tracker's share of the CPU is part of the design's cost."""
        name = f"bench-{uuid.uuid4().hex[:8]}"
        config = QueueConfig(self.bootstrap, name, f"{name}-g")
        config.ensure_topics(partitions=shape.partitions)
        fill(self.bootstrap, name, self.args.messages, shape.size)
        tracker = RedeliveryTracker(config)
        tracker.start()
        try:
            return io_floor_consume(config, self.args.messages, self.args.batch, batch_ends)
        finally:
            tracker.stop()


def _progress(line: str) -> None:
    """A line per run on stderr, so a long run shows where it is."""
    print(time.strftime("%H:%M:%S"), line, file=sys.stderr, flush=True)


def _produce(producer: Producer, topic: str, payload: bytes, partition: int) -> None:
    while True:
        try:
            producer.produce(topic, payload, partition=partition)
            return
        except BufferError:
            producer.poll(0.05)


# --- sections ----------------------------------------------------------------


def throughput_grid(bench: Bench, shapes: list[Shape]) -> list[dict]:
    return [
        {
            **asdict(shape),
            "msgs_per_s": {
                s: round(bench.throughput(s, shape, bench.args.messages)) for s in bench.systems
            },
        }
        for shape in shapes
    ]


def ratios(rows: list[dict], floors: dict[str, float]) -> dict:
    """Our backends against the bare ShareConsumer, and kmq against its I/O
    floors, per-message and batch acks alike (on the first row's shape, which
    is one consumer's)."""

    def vs_share_consumer(names: tuple[str, ...], keep: Callable[[dict], bool]) -> dict:
        return {
            Shape(row["partitions"], row["size"], row["consumers"]).key: {
                n: round(rates[n] / rates[SHARE_CONSUMER], 3) for n in names if n in rates
            }
            for row in rows
            if keep(row) and SHARE_CONSUMER in (rates := row["msgs_per_s"])
        }

    first = rows[0]["msgs_per_s"]
    return {
        "share_vs_share_consumer": vs_share_consumer(
            (SHARE_EACH, SHARE_BATCH, SHARE_FAST), lambda r: True
        ),
        "kmq_vs_share_consumer_one_consumer_per_partition": vs_share_consumer(
            (KMQ_EACH, KMQ_BATCH), lambda r: r["partitions"] == r["consumers"]
        ),
        "kmq_io_floor_msgs_per_s": {n: round(f) for n, f in floors.items()},
        "kmq_vs_io_floor": {n: round(first[n] / f, 3) for n, f in floors.items() if n in first},
    }


def head_of_line(bench: Bench, shape: Shape) -> dict:
    """Throughput, then latency at half the slowest one's head-of-line throughput
    (above it a system falls behind, and its latency grows with the run's length)."""
    slow = {"slow_every": bench.args.slow_every, "slow_ms": bench.args.slow_ms}
    n = bench.args.slow_messages
    rates = {s: round(bench.throughput(s, shape, n, **slow)) for s in bench.systems}
    rate = min(rates.values()) // 2
    systems = {
        s: {"msgs_per_s": rates[s], **bench.latency(s, shape, rate, **slow)} for s in bench.systems
    }
    return {
        **asdict(shape),
        **slow,
        "messages": n,
        "latency_at_msgs_per_s": rate,
        "systems": systems,
    }


def run(bootstrap: str, args: argparse.Namespace) -> dict:
    """The grid; then, on its first shape (1 consumer, 4 partitions, 100 B by
    default), kmq's I/O floor, latency at half the slowest system's rate there,
    and the head-of-line case."""
    shapes = [Shape(*cell) for cell in product(args.partitions, args.sizes, args.consumers)]
    started, load = time.monotonic(), os.getloadavg()[0]
    bench = Bench(bootstrap, args)
    try:
        rows = throughput_grid(bench, shapes)
        rate = min(rows[0]["msgs_per_s"].values()) // 2
        return {
            "load_average_at_start": load,
            "settings": {k: getattr(args, k) for k in SETTINGS},
            "throughput": rows,
            "ratios": ratios(
                rows,
                {
                    KMQ_EACH: bench.io_floor(shapes[0], batch_ends=False),
                    KMQ_BATCH: bench.io_floor(shapes[0], batch_ends=True),
                },
            ),
            "latency": {
                **asdict(shapes[0]),
                "msgs_per_s": rate,
                "systems": {s: bench.latency(s, shapes[0], rate) for s in bench.systems},
            },
            "head_of_line": head_of_line(bench, shapes[0]),
            "slow_work": slow_work.run(
                bootstrap, slow_work.QUICK if args.quick else slow_work.CASES
            ),
            "run_s": round(time.monotonic() - started),
        }
    finally:
        bench.close()


def grid_and_slow_work(bootstrap: str, args: argparse.Namespace) -> dict:
    """The throughput grid and the slow-work section alone, in one run."""
    shapes = [Shape(*cell) for cell in product(args.partitions, args.sizes, args.consumers)]
    bench = Bench(bootstrap, args)
    try:
        return {
            "settings": {k: getattr(args, k) for k in SETTINGS},
            "throughput": throughput_grid(bench, shapes),
            "slow_work": slow_work.run(bootstrap),
        }
    finally:
        bench.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000, help="records per throughput run")
    parser.add_argument("--batch", type=int, default=500, help="max records per poll")
    parser.add_argument("--poll-timeout", type=float, default=0.05, help="seconds per poll")
    parser.add_argument("--latency-s", type=float, default=5.0, help="seconds per latency run")
    parser.add_argument("--slow-every", type=int, default=500)
    parser.add_argument("--slow-ms", type=int, default=200)
    parser.add_argument(
        "--slow-messages", type=int, default=25_000, help="records per head-of-line run"
    )
    parser.add_argument(
        "--run-timeout", type=float, default=120.0, help="seconds before a run fails"
    )
    parser.add_argument("--partitions", nargs="+", type=int, default=list(PARTITIONS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="record bytes")
    parser.add_argument("--consumers", nargs="+", type=int, default=list(CONSUMERS))
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--quick", action="store_true", help="a smoke test: tiny sizes")
    parser.add_argument(
        "--grid-and-slow-work",
        action="store_true",
        help="only the throughput grid and the slow-work section",
    )
    args = parser.parse_args()
    if args.quick:
        args.messages, args.slow_messages, args.latency_s, args.slow_every = 2000, 2000, 1.0, 100
        args.partitions, args.sizes = [4], [100]
    if args.grid_and_slow_work:
        report({"queues": lambda bootstrap: grid_and_slow_work(bootstrap, args)})
        return
    report({"queues": lambda bootstrap: run(bootstrap, args)})


if __name__ == "__main__":
    main()
