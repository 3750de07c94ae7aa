"""`kmq demo`: demo queues on the configured cluster, and live traffic through them.

The traffic goes through the real queue core: a producer, a worker that acks
nine messages in ten and drops the rest (so redeliveries and, after the
retries, dead letters show up); the Celery workers' trackers redeliver.
"""

import json
import random
import time
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer

from .stopping import stop_event

DEMO_QUEUES = {"orders": 3, "emails": 3}


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--traffic", action="store_true", help="keep producing and consuming until stopped"
    )
    parser.add_argument("--rate", type=float, default=5.0, help="messages per second per queue")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    queues = register()
    if options["verbosity"]:
        command.stdout.write("demo queues: " + ", ".join(q.topic for q in queues))
    if options["traffic"]:
        run_traffic([q.config() for q in queues], options["rate"])


def register() -> list[Queue]:
    """Registers the demo queues and creates their topics (idempotent)."""
    cluster, _ = Cluster.objects.get_or_create(name="local")
    queues = []
    for topic, partitions in DEMO_QUEUES.items():
        queue, _ = Queue.objects.get_or_create(
            cluster=cluster,
            topic=topic,
            defaults={"group_id": f"{topic}-workers", "partitions": partitions},
        )
        queue.config().ensure_topics(partitions=queue.partitions)
        queues.append(queue)
    return queues


def run_traffic(configs: list[QueueConfig], rate: float) -> None:
    stop = stop_event()
    rng = random.Random()
    producers = [QueueProducer(c) for c in configs]
    clients = [QueueClient(c) for c in configs]
    sequence, next_send = 0, time.monotonic()
    try:
        while not stop.is_set():
            if time.monotonic() >= next_send:
                sequence += 1
                next_send += 1.0 / rate
                for config, producer in zip(configs, producers, strict=True):
                    body = {"id": sequence, "queue": config.topic, "at": time.time()}
                    producer.send(json.dumps(body).encode(), key=str(sequence).encode())
            for client in clients:
                for message in client.poll(100, 0.05):
                    if rng.random() < 0.9:
                        client.ack(message)
    finally:
        for client in clients:
            client.close()
        for producer in producers:
            producer.flush(5)
