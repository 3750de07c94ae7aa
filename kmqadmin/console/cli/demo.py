"""`kmq demo`: demo queues on the configured cluster, and traffic for them."""

import json
import time
from argparse import ArgumentParser
from typing import Any

from confluent_kafka import Producer
from django.core.management.base import BaseCommand

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kafka.config import producer_config
from kmqadmin.kafka.topics import ensure_topics

from .signals import stop_event

DEMO_QUEUES = {"orders": 3, "emails": 3}


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--traffic", action="store_true", help="keep producing demo messages until stopped"
    )
    parser.add_argument("--rate", type=float, default=5.0, help="messages per second per queue")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    queues = register()
    command.stdout.write("demo queues: " + ", ".join(q.topic for q in queues))
    if options["traffic"]:
        produce(queues, options["rate"])


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
        ensure_topics(
            cluster.bootstrap,
            {name: queue.partitions for name in (topic, queue.markers_topic, queue.dlq_topic)},
        )
        queues.append(queue)
    return queues


def produce(queues: list[Queue], rate: float) -> None:
    stop = stop_event()
    producers = {q.topic: Producer(producer_config(q.cluster.bootstrap)) for q in queues}
    sequence = 0
    while not stop.wait(1.0 / rate):
        sequence += 1
        for topic, producer in producers.items():
            body = {"id": sequence, "queue": topic, "at": time.time()}
            producer.produce(topic, key=str(sequence).encode(), value=json.dumps(body).encode())
            producer.poll(0)
    for producer in producers.values():
        producer.flush(5)
