"""The minute's check through a broker that stalls (SIGSTOP, as a broker in a
long GC pause or behind a partition): every rule is still checked, the ones
read from the database as usual, the ones read from Kafka say "unknown"
and keep their alert as it was, and all are measured again once it resumes."""

import os
import signal
from collections.abc import Iterator

import pytest
from django.utils import timezone

from kmqadmin.console.models import AlertEvent, AlertRule, Cluster, Queue, QueueMinute
from kmqadmin.console.services.alerts.evaluation import check_all
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.queue_helpers import send

pytestmark = pytest.mark.django_db


@pytest.fixture
def stalled_queue(own_broker: EmbeddedBroker) -> Iterator[Queue]:
    cluster = Cluster.objects.create(name="stalls", bootstrap_servers=own_broker.bootstrap_servers)
    queue = Queue.objects.create(cluster=cluster, topic="stalls", group_id="stalls-workers")
    queue.config().ensure_topics(partitions=3)
    yield queue
    os.kill(own_broker.process.pid, signal.SIGCONT)  # never left stopped


def test_a_stalled_broker_leaves_kafka_read_alerts_as_they_were(
    own_broker: EmbeddedBroker, stalled_queue: Queue
) -> None:
    config = stalled_queue.config()
    send(config, 3)  # no worker yet: three waiting
    lag = AlertRule.objects.create(queue=stalled_queue, condition="group_lag", threshold=0)
    dead = AlertRule.objects.create(queue=stalled_queue, condition="dead_letters", threshold=0)
    assert check_all()["fired"] == 1  # the lag
    lag.refresh_from_db()
    assert lag.firing

    # The kept clients' answers are a second old; beat checks a minute
    # apart: the next check asks the broker again, as a new client would.
    clients.close()
    os.kill(own_broker.process.pid, signal.SIGSTOP)
    try:
        QueueMinute.objects.create(queue=stalled_queue, minute=timezone.now(), dead_lettered=2)
        found = check_all()
    finally:
        os.kill(own_broker.process.pid, signal.SIGCONT)
    assert (found["unmeasurable"], found["fired"]) == (1, 1)  # lag unknown; dead letters fired
    lag.refresh_from_db()
    dead.refresh_from_db()
    assert lag.firing and lag.check_error.startswith("Kafka did not answer")
    assert dead.firing and dead.check_error == ""
    assert not AlertEvent.objects.filter(rule=lag, kind="resolved").exists()

    assert check_all()["unmeasurable"] == 0  # resumed: measured again
    lag.refresh_from_db()
    assert lag.firing and lag.check_error == "" and lag.value == 3
