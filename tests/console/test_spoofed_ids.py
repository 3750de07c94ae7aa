"""A producer's kmq-id header naming another message: an action on its row
acts on that row's copy or on nothing (409), never on the message it names."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry, Queue
from kmqadmin.console.services.clusters import clients
from kmqadmin.kmq import Message, QueueClient, QueueConfig, QueueProducer, markers
from kmqadmin.kmq import headers as h
from tests.console.conftest import client_as
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until

pytestmark = pytest.mark.django_db


def _in_flight(registered: Queue, count: int) -> None:
    view = clients.in_flight(registered.config())
    wait_for(lambda: view.refresh() or view.count() == count, 20, f"{count} in flight")


def test_an_action_on_a_spoofed_row_is_a_409_and_the_real_message_stays_in_flight(
    queue: QueueConfig, registered: Queue
) -> None:
    producer = QueueProducer(queue)
    producer.send(value=b"real", partition=0)
    producer.flush()
    with QueueClient(queue) as worker:
        [real] = poll_until(worker, 1)
        producer.send(value=b"spoof", headers={h.MESSAGE_ID: real.id.encode()}, partition=0)
        producer.send(value=b"elsewhere", headers={h.MESSAGE_ID: b"other-queue/0/0"}, partition=0)
        producer.flush()
        spoof, elsewhere = poll_until(worker, 2)
    assert spoof.id == real.id and elsewhere.id == "other-queue/0/0"
    _in_flight(registered, 3)

    operator, service = client_as("operator"), APIClient()
    service.force_authenticate(User.objects.get(username="operator"))

    def console(m: Message, action: str):
        form = {"message_id": m.id, "partition": m.partition, "offset": m.offset}
        return operator.post(f"/queues/{queue.topic}/act/{action}", form)

    def api(m: Message, action: str):
        url = f"/api/v1/queues/{queue.topic}/messages/{m.id}/{action}"
        body = {"partition": m.partition, "offset": m.offset, "reason": "spoofed"}
        return service.post(url, body, "json")

    refused = console(spoof, "ack")
    assert refused.status_code == 409
    assert b"is not the open delivery of" in refused.content
    answer = api(spoof, "reject")
    assert answer.status_code == 409 and real.id in answer.json()["detail"]
    assert api(elsewhere, "ack").status_code == 409
    assert b"is not a kmq-id of" in console(elsewhere, "retry").content
    # Nothing was written: the start markers of the three deliveries (one
    # per poll, the compact format's range for the two polled together) are
    # all the markers topic holds.
    written = [markers.decode(r.key(), r.value(), 0) for r in read_all(queue, queue.markers_topic)]
    assert {m.kind for m in written} == {markers.MarkerType.START}
    assert sum(m.last - m.first + 1 for m in written) == 3
    assert not AuditEntry.objects.filter(action__in=("ack", "retry", "reject")).exists()
    view = clients.in_flight(registered.config())
    assert view.get(real.partition, real.offset) is not None

    assert console(real, "ack").status_code == 200
    [entry] = AuditEntry.objects.filter(action="ack")
    assert (entry.target, entry.before["offset"]) == (real.id, real.offset)
    _in_flight(registered, 2)
    # The real message acked, the spoofed copy is the only open one its id leads to.
    assert api(spoof, "ack").status_code == 200
    _in_flight(registered, 1)
