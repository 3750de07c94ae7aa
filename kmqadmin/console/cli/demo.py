"""`kmq demo`: demo queues on the configured cluster, and live traffic through them.

The traffic goes through the real queue core: a producer, a worker that acks
nine messages in ten and drops the rest (so redeliveries and, after the
retries, dead letters show up); the Celery workers' trackers redeliver.
"""

import contextlib
import json
import random
import time
from argparse import ArgumentParser
from typing import Any

from confluent_kafka import KafkaException
from django.core.management.base import BaseCommand

from kmqadmin.console.cli.cluster import local
from kmqadmin.console.cli.stopping import stop_event
from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.kafka.ownership.service import Service
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer
from kmqadmin.scheduler.client import ScheduleClient

DEMO_QUEUES = {"orders": 3, "emails": 3}
DEMO_SCHEDULES = "reminders"
REMINDERS_DUE_MIN = (2, 5, 10, 30, 60)


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--traffic", action="store_true", help="keep producing and consuming until stopped"
    )
    parser.add_argument("--rate", type=float, default=5.0, help="messages per second per queue")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    queues = register()
    reminders = register_schedules()
    if options["verbosity"]:
        command.stdout.write("demo queues: " + ", ".join(q.topic for q in queues))
        command.stdout.write(f"demo schedules topic: {reminders.topic}")
    if options["traffic"]:
        run_traffic([q.config() for q in queues], options["rate"])


def register() -> list[Queue]:
    """Registers the demo queues and creates their topics (idempotent)."""
    cluster = local()
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


def register_schedules() -> ScheduleTopic:
    """A schedules topic whose reminders fire into the `emails` queue over
    the next hour, so the Schedules page has something to show; the
    reminders are written once, when the topic is first registered."""
    cluster = local()
    reminders, created = ScheduleTopic.objects.get_or_create(
        cluster=cluster,
        topic=DEMO_SCHEDULES,
        defaults={"group_id": f"{DEMO_SCHEDULES}-scheduler", "partitions": 3},
    )
    reminders.config().ensure_topics(partitions=reminders.partitions)
    if created:
        now = time.time()
        with ScheduleClient(reminders.config()) as client:
            for n, minutes in enumerate(REMINDERS_DUE_MIN, start=1):
                body = {"reminder": n, "queue": "emails", "due_in_min": minutes}
                due = now + 60 * minutes  # epoch seconds
                client.schedule(f"reminder-{n}", due, "emails", json.dumps(body).encode())
    return reminders


def run_traffic(configs: list[QueueConfig], rate: float) -> None:
    """Until Ctrl-C or SIGTERM, whatever Kafka does meanwhile."""
    stop = stop_event()
    producers = [QueueProducer(c) for c in configs]
    traffic = DemoTraffic(configs, producers, rate)
    traffic.start()
    stop.wait()
    # All within `kmq run`'s 7 s grace; the traffic's thread is a daemon.
    traffic.stop(timeout=2)
    deadline = time.monotonic() + 3
    for producer in producers:
        with contextlib.suppress(KafkaException):
            producer.flush(max(0.0, deadline - time.monotonic()))
        producer.close()


class DemoTraffic(Service):
    """``rate`` messages a second onto each queue, worked as a real worker
    does. A Kafka error (a broker that stalled and forgot the group, or is
    away) ends one life of the workers' clients; the next, after a pause,
    rejoins. The producers outlive them, so no message is dropped with a
    life: what they hold is retried for librdkafka's message.timeout.ms (5
    minutes), which covers a broker's restart or stall."""

    thread_name = "kmq-demo-traffic"

    def __init__(
        self, configs: list[QueueConfig], producers: list[QueueProducer], rate: float
    ) -> None:
        super().__init__()
        self.configs, self.producers, self.rate = configs, producers, rate
        self._sequence = 0

    def serve(self) -> None:
        rng = random.Random()
        clients: list[QueueClient] = []
        try:
            clients.extend(QueueClient(c) for c in self.configs)
            next_send = time.monotonic()
            while not self._stop.is_set():
                if time.monotonic() >= next_send:
                    self._sequence += 1
                    next_send += 1.0 / self.rate
                    self._send()
                for client in clients:
                    for message in client.poll(100, 0.05):
                        if rng.random() < 0.9:
                            client.ack(message)
        finally:
            for client in clients:
                with contextlib.suppress(KafkaException):
                    client.close()

    def _send(self) -> None:
        for config, producer in zip(self.configs, self.producers, strict=True):
            body = {"id": self._sequence, "queue": config.topic, "at": time.time()}
            producer.send(json.dumps(body).encode(), key=str(self._sequence).encode())
