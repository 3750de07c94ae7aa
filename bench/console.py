"""Console page speed on a big queue; prints one JSON document.

    .venv/bin/python bench/console.py [--records 1000000] [--in-flight 100000]
        [--dead 100000] [--requests 30] [--viewers 100] [--watch-s 20]

One queue of ``--records`` records, ``--in-flight`` of them delivered and
not acknowledged (start markers, no end markers, an hour's timeout) and
``--dead`` rejected into its DLQ. The web process builds its in-flight view
of the markers (timed: a web process does it once after it starts), then
the server time of each page, p50
and p95 over ``--requests`` requests after a first one (reported apart: it
builds the web process's views of the topics), through Django's test
client, so what is timed is the view, not a network.

The browser is timed seeking by time and scanning with a JSONPath that
matches nothing (so the scan cap, not the page, ends the read).

Then the web process's CPU with 1 and with ``--viewers`` WebSocket viewers
of the queue page, a real web process serving real sockets for ``--watch-s``
while a worker churns the queue, so the page changes every tick. The live
push renders once per queue per tick (console/live/feed.py), so the ratio
should stay near 1; the target is at most 2.

The baseline in the same run is the plain confluent-kafka cost every page
pays at least: one watermark lookup per partition.
"""

import argparse
import asyncio
import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["KMQ_DATA_DIR"] = tempfile.mkdtemp(prefix="kmq-bench-console-")
atexit.register(shutil.rmtree, os.environ["KMQ_DATA_DIR"], ignore_errors=True)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kmqadmin.settings")
os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver,127.0.0.1"

import django  # noqa: E402

django.setup()

import websockets  # noqa: E402
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from bench.common import report  # noqa: E402
from bench.kmq_core.filled_queues import fill  # noqa: E402
from kmqadmin.console.cli import processes  # noqa: E402
from kmqadmin.console.models import Cluster, Queue  # noqa: E402
from kmqadmin.console.services.clusters import clients  # noqa: E402
from kmqadmin.kafka.client.config import consumer_config  # noqa: E402
from kmqadmin.kafka.embedded import child  # noqa: E402
from kmqadmin.kmq import QueueClient  # noqa: E402

ASGI = "kmqadmin.asgi:application"
PARTITIONS = 4
TARGET_P95_MS = 200
TARGET_CPU_RATIO = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--in-flight", type=int, default=100_000)
    parser.add_argument("--dead", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--watch-s", type=float, default=20.0)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    report({"console": lambda bootstrap: run(bootstrap, args)})


def run(bootstrap: str, args: argparse.Namespace) -> dict:
    load_at_start = round(os.getloadavg()[0], 2)  # other work on the machine skews every figure
    queue = register(bootstrap)
    started = time.monotonic()
    fill_queue(queue, args)
    filled_s = round(time.monotonic() - started, 1)
    client = Client()
    client.force_login(User.objects.create_superuser("bench", password="bench"))
    view_build_s = build_in_flight_view(queue)
    pages = page_times(client, queue, args.requests)
    viewers = viewer_cpu(queue, args)
    return {
        "load_average_at_start": load_at_start,
        "settings": vars(args),
        "fill_s": filled_s,
        "in_flight_view_build_s": view_build_s,
        "baseline_watermarks": watermark_times(bootstrap, queue.topic, args.requests),
        "pages": pages,
        "pages_over_target": [name for name, t in pages.items() if t["p95_ms"] > TARGET_P95_MS],
        "live_push": viewers,
        "targets": {"page_p95_ms": TARGET_P95_MS, "viewers_cpu_ratio": TARGET_CPU_RATIO},
    }


def register(bootstrap: str) -> Queue:
    cluster = Cluster.objects.create(name="bench", bootstrap_servers=bootstrap)
    queue = Queue.objects.create(
        cluster=cluster,
        topic=f"bench-console-{os.getpid()}",
        group_id="bench-console-workers",
        message_timeout_ms=3_600_000,  # nothing is redelivered during the run
    )
    queue.config().ensure_topics(partitions=PARTITIONS)
    return queue


def fill_queue(queue: Queue, args: argparse.Namespace) -> None:
    """Writes the records, then takes ``in_flight`` without acknowledging
    them and rejects ``dead`` more, through our own client."""
    config = queue.config()
    fill(config.bootstrap_servers, queue.topic, args.records, 100)
    with QueueClient(config) as worker:
        taken = 0
        while taken < args.in_flight + args.dead:
            batch = worker.poll(500, timeout=1.0)
            if taken >= args.in_flight:
                worker.reject_all(batch, "bench")
            taken += len(batch)
        worker.flush()


def build_in_flight_view(queue: Queue) -> float:
    """Seconds the web process takes to read the markers into its in-flight
    view, once after it starts: pages refresh it 0.2 s at a time, so without
    this the first few requests of any page would each pay a slice of it."""
    started = time.perf_counter()
    if not clients.in_flight(queue.config()).catch_up(120):
        raise RuntimeError("the in-flight view did not catch up in 120 s")
    return round(time.perf_counter() - started, 2)


def page_times(client: Client, queue: Queue, requests: int) -> dict[str, dict]:
    """Each page ``requests`` + 1 times; the message page for as many
    different messages, each read cold, as a support person opens them."""
    topic = queue.topic
    ids = spread_ids(queue, requests + 1)
    repeated = {
        "dashboard": "/",
        "queue": f"/queues/{topic}/",
        "dlq": f"/queues/{topic}/dlq/",
        "dlq_filtered": f"/queues/{topic}/dlq/?contains=zzz&reason=bench",
        "in_flight_api": f"/api/v1/queues/{topic}/in-flight/",
        "browser_seek_by_time": f"/clusters/{queue.cluster.name}/topics/{topic}/browse?"
        + urlencode({"partition": 1, "start": "time", "at": middle_time(queue)}),
        "browser_jsonpath": f"/clusters/{queue.cluster.name}/topics/{topic}/browse?"
        + urlencode({"partition": 1, "start": "oldest", "json_path": "$.missing"}),
    }
    pages = {name: [url] * (requests + 1) for name, url in repeated.items()}
    pages["message"] = [f"/queues/{topic}/messages/{message_id}" for message_id in ids]
    return {name: timed_gets(client, urls) for name, urls in pages.items()}


def middle_time(queue: Queue) -> str:
    """An ISO time inside the records: the timestamp of partition 1's middle one."""
    config = queue.config()
    consumer = Consumer(consumer_config(config.bootstrap_servers, "bench-console-time"))
    try:
        tp = TopicPartition(queue.topic, 1)
        _, high = consumer.get_watermark_offsets(tp, timeout=10)
        consumer.assign([TopicPartition(queue.topic, 1, high // 2)])
        record = None
        while record is None or record.error() is not None:
            record = consumer.poll(10)
        at = record.timestamp()[1]
    finally:
        consumer.close()
    return datetime.fromtimestamp(at / 1000, UTC).isoformat()


def spread_ids(queue: Queue, n: int) -> list[str]:
    """kmq-ids of records spread over every partition and offset: in
    flight, dead-lettered and waiting ones, each story read cold."""
    consumer = Consumer(consumer_config(queue.config().bootstrap_servers, "bench-console-ids"))
    try:
        ends = [
            consumer.get_watermark_offsets(TopicPartition(queue.topic, p), timeout=10)[1]
            for p in range(PARTITIONS)
        ]
    finally:
        consumer.close()
    return [f"{queue.topic}/{i % PARTITIONS}/{i * ends[i % PARTITIONS] // n}" for i in range(n)]


def timed_gets(client: Client, urls: list[str]) -> dict:
    def get(url: str) -> None:
        answer = client.get(url)
        if answer.status_code != 200:
            raise RuntimeError(f"{url}: {answer.status_code} {answer.content[:300]!r}")

    return timed([partial(get, url) for url in urls])


def timed(calls: list[Callable[[], Any]]) -> dict:
    """The first call apart (it builds the web process's views of the
    topics), then p50 and p95 of the others."""
    started = time.perf_counter()
    calls[0]()
    first_ms = (time.perf_counter() - started) * 1000
    ms = []
    for call in calls[1:]:
        started = time.perf_counter()
        call()
        ms.append((time.perf_counter() - started) * 1000)
    ms.sort()
    return {
        "first_ms": round(first_ms, 1),
        "p50_ms": round(ms[len(ms) // 2], 1),
        "p95_ms": round(ms[max(0, int(len(ms) * 0.95) - 1)], 1),
    }


def watermark_times(bootstrap: str, topic: str, n: int) -> dict:
    consumer = Consumer(consumer_config(bootstrap, "bench-console-baseline"))
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        return timed([lambda: [consumer.get_watermark_offsets(tp, timeout=10) for tp in tps]] * n)
    finally:
        consumer.close()


# How long a socket may take to get its first frame before the run gives up.
FIRST_FRAME_S = 60


def viewer_cpu(queue: Queue, args: argparse.Namespace) -> dict:
    client = Client()
    client.force_login(User.objects.get(username="bench"))
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    with web_process() as (pid, port), churn(queue):
        url = f"ws://127.0.0.1:{port}/ws/queues/{queue.topic}/in-flight/"
        one = asyncio.run(watch(url, cookie, 1, args.watch_s, pid))
        many = asyncio.run(watch(url, cookie, args.viewers, args.watch_s, pid))
    return {
        "one_viewer": one,
        f"{args.viewers}_viewers": many,
        "cpu_ratio": round(many["cpu_s"] / one["cpu_s"], 2) if one["cpu_s"] else None,
    }


async def watch(url: str, cookie: str, viewers: int, seconds: float, pid: int) -> dict:
    """Opens the sockets, then counts the web process's CPU and the frames
    each socket received over ``seconds``."""
    origin = url.replace("ws://", "http://").split("/ws/")[0]
    sockets = [
        await websockets.connect(url, additional_headers={"Cookie": cookie}, origin=origin)
        for _ in range(viewers)
    ]
    frames = [0] * viewers
    joined = [asyncio.Event() for _ in range(viewers)]

    async def read(i: int) -> None:
        async for _ in sockets[i]:
            frames[i] += 1
            joined[i].set()

    readers = [asyncio.create_task(read(i)) for i in range(viewers)]
    # Each socket's first frame: the cost of joining is not watching (a fixed
    # 2 s was not enough on a loaded machine, and the window then saw none).
    try:
        async with asyncio.timeout(FIRST_FRAME_S):
            await asyncio.gather(*(event.wait() for event in joined))
    except TimeoutError:
        waiting = sum(not event.is_set() for event in joined)
        message = f"{waiting} of {viewers} sockets got no frame in {FIRST_FRAME_S} s"
        raise SystemExit(message) from None
    before, frames_before = cpu_seconds(pid), sum(frames)
    await asyncio.sleep(seconds)
    used, received = cpu_seconds(pid) - before, sum(frames) - frames_before
    for viewer in sockets:
        await viewer.close()
    for reader in readers:
        reader.cancel()
    return {"cpu_s": round(used, 2), "frames_per_viewer": round(received / viewers, 1)}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def web_process():
    """The web process as `make run` starts it at WARNING."""
    port = free_port()
    process = subprocess.Popen(
        processes.web("127.0.0.1", port, "WARNING"),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "DJANGO_LOG_LEVEL": "WARNING"},
    )
    try:
        wait_for_port(port, process)
        yield process.pid, port
    finally:
        child.stop(process, grace=30)


@contextmanager
def churn(queue: Queue):
    """A worker taking and acknowledging about a hundred waiting records a
    second, so the queue page's gauges change on every tick and every tick
    pushes to every viewer."""
    stop = threading.Event()

    def work() -> None:
        with QueueClient(queue.config()) as worker:
            while not stop.wait(0.1):
                worker.ack_all(worker.poll(10, timeout=0.1))

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the web process exited with {process.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the web process did not listen on {port} within {timeout_s} s")


if __name__ == "__main__":
    main()
