"""Our SQS endpoint against ElasticMQ on the same machine; prints one JSON document.

    .venv/bin/python bench/sqs.py [--messages 3000] [--clients 4]
        [--rest-messages 400] [--body-bytes 256] [--warmup 200]

About 2 minutes on 2 cores with the defaults, most of it our endpoint's share.

Each server gets a fresh queue (a 5-minute visibility timeout: nothing comes
back during the run) and ``--clients`` client processes, each with a boto3
client of its own, as services sharing a queue are. Two phases: the clients
send ``--messages`` in SendMessageBatch calls of 10; then each receives up
to 10 at a time (long poll 1 s) and deletes what it got with one
DeleteMessageBatch, until all are deleted. Messages per second for each
phase and for the two together (each message sent, received and deleted),
and p50/p99 of every ReceiveMessage that found messages and of every
DeleteMessageBatch. CPU per message twice: of the server process alone,
and of the server's whole side (the machine's CPU less the clients'; ours:
web process, broker and tracker), and the clients'. ``cores_busy``: the
cores the server side and clients kept busy together; near the machine's
count, the run was bound by CPU, and only less CPU per message is faster.
A ``--warmup`` round on the same queue first (our web process joins the
queue's group on its first receive, the JVM compiles its hot paths) is not
counted.

Ours is one web process, as `make run` serves it, with the queue's
redelivery tracker running in this process, as a worker runs it. The peer
is ElasticMQ (.jars/elasticmq, `make deps`), in memory, on the same cores.
Then our REST API's enqueue (one message per POST, token auth) against our
SQS SendMessage one at a time, ``--rest-messages`` each: what the SQS
protocol costs over our own API.

Targets, printed with pass/fail, not asserted: our throughput at least
ElasticMQ's; our ReceiveMessage p99 under 50 ms.
"""

import argparse
import multiprocessing
import os
import sys
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import quantiles, report
from bench.cpu_phases import Phase, phase

TARGET_RECEIVE_P99_MS = 50
BATCH = 10
VISIBILITY_S = "300"
WAIT_S = 1
REGION = "eu-west-3"
PHASE_TIMEOUT_S = 300


# --- the client processes ----------------------------------------------------
# Spawned, they import this module without sqs_servers (no Django): plain
# SQS and HTTP clients, each holding one connection.

_clients: dict[str, Any] = {}
_deleted: Any = None  # a shared counter of messages deleted, set by _share


def _share(counter: Any) -> None:
    global _deleted
    _deleted = counter


def _sqs(server: dict) -> Any:
    """This process's boto3 client of ``server``, made once: its
    connection and signing key are reused as a service's would be."""
    if server["endpoint"] not in _clients:
        import boto3
        from botocore.config import Config

        _clients[server["endpoint"]] = boto3.client(
            "sqs",
            endpoint_url=server["endpoint"],
            region_name=REGION,
            aws_access_key_id=server["key_id"],
            aws_secret_access_key=server["secret"],
            config=Config(retries={"max_attempts": 1}, max_pool_connections=1),
        )
    return _clients[server["endpoint"]]


def send_batches(server: dict, url: str, count: int, body: str) -> int:
    """``count`` messages in SendMessageBatch calls of up to 10."""
    client = _sqs(server)
    for start in range(0, count, BATCH):
        entries = [{"Id": str(i), "MessageBody": body} for i in range(min(BATCH, count - start))]
        answer = client.send_message_batch(QueueUrl=url, Entries=entries)
        if answer.get("Failed"):
            raise RuntimeError(f"send failed: {answer['Failed'][:3]}")
    return count


def send_singles(server: dict, url: str, count: int, body: str) -> int:
    client = _sqs(server)
    for _ in range(count):
        client.send_message(QueueUrl=url, MessageBody=body)
    return count


def rest_enqueues(server: dict, topic: str, count: int, body: str) -> int:
    """``count`` POSTs to our REST API's enqueue, on one kept-alive session."""
    if "rest" not in _clients:
        import requests

        _clients["rest"] = requests.Session()
        _clients["rest"].headers["Authorization"] = f"Token {server['token']}"
    session, url = _clients["rest"], f"{server['rest']}/queues/{topic}/messages/"
    for _ in range(count):
        answer = session.post(url, json={"value": body}, timeout=30)
        if answer.status_code != 201:
            raise RuntimeError(f"enqueue: {answer.status_code} {answer.text[:300]}")
    return count


def drain(server: dict, url: str, total: int) -> dict:
    """Receive 10, delete them in one batch, until ``total`` are deleted by
    all the clients together. Returns the milliseconds of each receive that
    found messages and of each delete, the ids received, the receives that
    found none and when its last delete returned (a plain dict: it crosses
    from the client process). The drain ends at the last delete, not when
    the other clients' long polls come back empty."""
    client = _sqs(server)
    done = {"found_ms": [], "delete_ms": [], "ids": [], "empty": 0, "done_at": 0.0}
    deadline = time.monotonic() + PHASE_TIMEOUT_S
    while _deleted.value < total and time.monotonic() < deadline:
        started = time.perf_counter()
        answer = client.receive_message(
            QueueUrl=url, MaxNumberOfMessages=BATCH, WaitTimeSeconds=WAIT_S
        )
        messages = answer.get("Messages", [])
        if not messages:
            done["empty"] += 1
            continue
        done["found_ms"].append((time.perf_counter() - started) * 1000)
        done["ids"].extend(m["MessageId"] for m in messages)
        entries = [
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)
        ]
        started = time.perf_counter()
        deleted = client.delete_message_batch(QueueUrl=url, Entries=entries)
        done["delete_ms"].append((time.perf_counter() - started) * 1000)
        if deleted.get("Failed"):
            raise RuntimeError(f"delete failed: {deleted['Failed'][:3]}")
        with _deleted.get_lock():
            _deleted.value += len(messages)
        done["done_at"] = time.monotonic()
    return done


# --- one server's run --------------------------------------------------------


def shares(count: int, clients: int) -> list[int]:
    """``count`` split over ``clients``, in whole batches where it can be."""
    batches = [count // BATCH // clients + (i < count // BATCH % clients) for i in range(clients)]
    shares = [b * BATCH for b in batches]
    shares[0] += count - sum(shares)
    return shares


class Clients:
    """The client processes and the counter their drains share."""

    def __init__(self, clients: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.n, self.deleted = clients, context.Value("q", 0)
        self.pool = context.Pool(clients, initializer=_share, initargs=(self.deleted,))

    def send_and_drain(self, server: dict, url: str, count: int, body: str) -> dict:
        """Phase 1 and 2 on ``url``, ``count`` messages; their figures."""
        sent = phase(
            self.pool,
            server["pid"],
            send_batches,
            [(server, url, n, body) for n in shares(count, self.n)],
        )
        self.deleted.value = 0
        drained = phase(self.pool, server["pid"], drain, [(server, url, count)] * self.n)
        drained.ended = max(d["done_at"] for d in drained.results)
        return figures(count, sent, drained)

    def close(self) -> None:
        self.pool.close()
        self.pool.join()


def figures(count: int, sent: Phase, drained: Phase) -> dict:
    found = sorted(ms for d in drained.results for ms in d["found_ms"])
    deletes = sorted(ms for d in drained.results for ms in d["delete_ms"])
    ids = [i for d in drained.results for i in d["ids"]]
    return {
        "msgs_per_s": round(count / (sent.seconds + drained.seconds)),
        "send_batch_msgs_per_s": round(count / sent.seconds),
        "receive_delete_msgs_per_s": round(count / drained.seconds),
        "receive_found": {
            "calls": len(found),
            "msgs_per_call": round(len(ids) / len(found), 2) if found else 0,
            **(quantiles(found) if found else {"p50_ms": None, "p99_ms": None}),
        },
        "delete_batch": {"calls": len(deletes), **quantiles(deletes)},
        "empty_receives": sum(d["empty"] for d in drained.results),
        "received": len(ids),
        "duplicates": len(ids) - len(set(ids)),
        "server_cpu_ms_per_msg": round(
            (sent.server_cpu_s + drained.server_cpu_s) * 1000 / count, 3
        ),
        "server_side_cpu_ms_per_msg": round(
            (sent.server_side_cpu_s + drained.server_side_cpu_s) * 1000 / count, 3
        ),
        "client_cpu_ms_per_msg": round(
            (sent.client_cpu_s + drained.client_cpu_s) * 1000 / count, 3
        ),
        # Of the machine's cores, how many were busy (server side and
        # clients): near os.cpu_count(), the run was bound by CPU, not waits.
        "cores_busy": round(
            (sent.machine_cpu_s + drained.machine_cpu_s) / (sent.seconds + drained.seconds),
            2,
        ),
    }


def measure(clients: Clients, server: dict, url: str, args: argparse.Namespace) -> dict:
    body = "x" * args.body_bytes
    clients.send_and_drain(server, url, args.warmup, body)
    result = clients.send_and_drain(server, url, args.messages, body)
    _progress(f"{server['name']}: {result['msgs_per_s']} msgs/s")
    return result


def make_queue(server: dict, name: str) -> str:
    import boto3

    client = boto3.client(
        "sqs",
        endpoint_url=server["endpoint"],
        region_name=REGION,
        aws_access_key_id=server["key_id"],
        aws_secret_access_key=server["secret"],
    )
    attributes = {"VisibilityTimeout": VISIBILITY_S}
    return client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]


# --- the run -----------------------------------------------------------------


def run(bootstrap: str, args: argparse.Namespace) -> dict:
    from bench import sqs_servers  # Django, on a data dir of this run's

    started, load = time.monotonic(), round(os.getloadavg()[0], 2)
    clients = Clients(args.clients)
    try:
        with sqs_servers.elasticmq() as peer:
            theirs = measure(clients, asdict(peer), make_queue(asdict(peer), _name()), args)
        with sqs_servers.ours(bootstrap) as web:
            server = asdict(web)
            names = [_name() for _ in range(3)]
            urls = [make_queue(server, n) for n in names]
            with sqs_servers.trackers(bootstrap, names):
                mine = measure(clients, server, urls[0], args)
                rest = rest_baseline(clients, server, names[1], urls[2], args)
    finally:
        clients.close()
    return {
        "load_average_at_start": load,
        "settings": vars(args),
        "servers": {"ours": "kmqadmin's SQS endpoint: one uvicorn process", "peer": peer.name},
        "ours": mine,
        "peer": theirs,
        "ratios_ours_over_peer": ratios(mine, theirs),
        "rest_baseline": rest,
        "targets": targets(mine, theirs),
        "run_s": round(time.monotonic() - started),
    }


def rest_baseline(
    clients: Clients, server: dict, topic: str, url: str, args: argparse.Namespace
) -> dict:
    """Our REST enqueue and our SQS SendMessage, one message per request each."""
    body, n = "x" * args.body_bytes, args.rest_messages
    split = [max(1, n // clients.n)] * clients.n
    pool, pid = clients.pool, server["pid"]
    rest = phase(pool, pid, rest_enqueues, [(server, topic, s, body) for s in split])
    single = phase(pool, pid, send_singles, [(server, url, s, body) for s in split])
    return {
        "messages": sum(split),
        "rest_enqueue_msgs_per_s": round(sum(split) / rest.seconds),
        "sqs_send_message_msgs_per_s": round(sum(split) / single.seconds),
        "sqs_send_message_over_rest": round(rest.seconds / single.seconds, 2),
    }


RATIOS = ("msgs_per_s", "send_batch_msgs_per_s", "receive_delete_msgs_per_s")


def ratios(mine: dict, theirs: dict) -> dict:
    found = {k: round(mine[k] / theirs[k], 2) for k in RATIOS}
    for q in ("p50_ms", "p99_ms"):
        ours, peer = mine["receive_found"][q], theirs["receive_found"][q]
        found[f"receive_{q}"] = round(ours / peer, 2) if ours and peer else None
    return found


def targets(mine: dict, theirs: dict) -> dict:
    p99 = mine["receive_found"]["p99_ms"]
    return {
        "msgs_per_s_at_least_peer": {
            "ours": mine["msgs_per_s"],
            "peer": theirs["msgs_per_s"],
            "pass": mine["msgs_per_s"] >= theirs["msgs_per_s"],
        },
        "receive_p99_under_ms": {
            "target": TARGET_RECEIVE_P99_MS,
            "ours": p99,
            "pass": p99 is not None and p99 < TARGET_RECEIVE_P99_MS,
        },
    }


def _name() -> str:
    return f"bench-sqs-{uuid.uuid4().hex[:8]}"


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3000, help="messages per server")
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument("--rest-messages", type=int, default=400)
    parser.add_argument("--body-bytes", type=int, default=256)
    parser.add_argument("--warmup", type=int, default=200, help="messages sent first, not counted")
    args = parser.parse_args()
    report({"sqs": lambda bootstrap: run(bootstrap, args)})


if __name__ == "__main__":
    main()
