"""A share queue's page: its group's members, offsets, settings and counts
from the real broker, no in-flight table, and the admin-only reset."""

import time

import pytest
from confluent_kafka import Producer
from django.test import Client

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import AcksRefused, LockExpired, QueueClient
from kmqadmin.kmq.share.counts import MINUTE_MS, ShareCounts, minute_of
from tests.console.conftest import client_as
from tests.process import wait_for
from tests.queue_helpers import poll_until, send
from tests.share_helpers import Sharer

pytestmark = pytest.mark.django_db


@pytest.fixture
def share_queue(kafka: EmbeddedBroker, topic: str) -> Queue:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(
        cluster=cluster, topic=topic, group_id=f"{topic}-workers", backend="share"
    )
    queue.config().ensure_topics(partitions=2)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for partition in (0, 1):
        producer.produce(topic, b"work", partition=partition)
    last = minute_of(now_ms()) - MINUTE_MS
    producer.produce(queue.config().counts_topic, ShareCounts(last, accepted=42).encode())
    producer.produce(queue.config().counts_topic, b"junk")
    assert producer.flush(10) == 0
    return queue


def sharer(kafka: EmbeddedBroker, queue: Queue) -> Sharer:
    return Sharer(kafka.bootstrap_servers, queue.group_id, queue.topic, client_id="worker-7")


def test_the_page_shows_a_running_consumer_and_no_in_flight_table(
    kafka: EmbeddedBroker, share_queue: Queue
) -> None:
    viewer = client_as("viewer")
    with sharer(kafka, share_queue) as consumer:
        consumer.accept(2)
        page = wait_for(
            lambda: (
                b"data-member" in (got := viewer.get(f"/queues/{share_queue.topic}/")).content
                and got
            ),
            30,
            "the member on the page",
        )
    html = page.content.decode()
    assert page.status_code == 200
    assert "worker-7" in html and f"{share_queue.topic}:0, {share_queue.topic}:1" in html
    assert 'data-partition="0"' in html and 'data-partition="1"' in html
    assert "Delivery limit 5" in html and "acquisition lock 30000 ms" in html
    assert "<td>42</td>" in html and "1 unreadable record skipped" in html
    assert "no in-flight table and no per-message deadline" in html
    assert "in-flight/" not in html and 'id="in-flight"' not in html  # no live table
    assert "Reset the share group" not in html  # admins only


def test_a_broker_error_is_shown_and_the_page_still_answers(share_queue: Queue) -> None:
    Cluster.objects.filter(pk=share_queue.cluster_id).update(bootstrap_servers="127.0.0.1:1")
    page = client_as("viewer").get(f"/queues/{share_queue.topic}/")
    assert page.status_code == 200
    assert b"Kafka: share group" in page.content


def reset(client: Client, queue: Queue, **form: str):
    return client.post(f"/queues/{queue.topic}/share-group/reset", form)


def test_the_reset_is_for_admins_refused_while_connected_and_audited(
    kafka: EmbeddedBroker, share_queue: Queue
) -> None:
    for role in ("viewer", "operator"):
        assert reset(client_as(role), share_queue, to="earliest").status_code == 403
    admin = client_as("admin")
    assert "Reset the share group" in admin.get(f"/queues/{share_queue.topic}/").content.decode()
    assert reset(admin, share_queue, to="sometime").status_code == 400
    assert reset(admin, share_queue, to="time").status_code == 400  # no time given
    with sharer(kafka, share_queue) as consumer:
        consumer.accept(2)
        refused = reset(admin, share_queue, to="earliest")
    assert refused.status_code == 409 and b"is not empty" in refused.content
    wait_for(
        lambda: b"data-member" not in admin.get(f"/queues/{share_queue.topic}/").content,
        30,
        "the consumer to leave",
    )
    done = reset(admin, share_queue, to="earliest")
    assert done.status_code == 200 and "0→0, 1→0" in done.content.decode()
    entries = list(AuditEntry.objects.filter(action="reset group offsets").order_by("pk"))
    assert [e.status for e in entries] == ["done"]  # refused before any intent was written
    topic = share_queue.topic
    assert entries[0].user.username == "admin"
    assert entries[0].target == f"share group {share_queue.group_id} on cluster local"
    assert entries[0].before["to"] == {"mode": "earliest", "topic": topic}
    assert set(entries[0].before["offsets"]) == {f"{topic}:0", f"{topic}:1"}
    assert entries[0].after == {
        "to": {"mode": "earliest", "topic": topic},
        "offsets": {f"{topic}:0": 0, f"{topic}:1": 0},
        "errors": {},
    }
    with sharer(kafka, share_queue) as consumer:
        assert len(consumer.accept(2)) == 2  # delivered again after the reset


def test_a_kmq_queue_has_no_share_group_to_reset(registered: Queue) -> None:
    admin = client_as("admin")
    assert b"Share group" not in admin.get(f"/queues/{registered.topic}/").content
    refused = reset(admin, registered, to="latest")
    assert refused.status_code == 409 and b"has no share group" in refused.content


def test_each_consumer_shows_what_it_held_and_its_expired_locks_on_the_page_api_and_metrics(
    kafka: EmbeddedBroker, topic: str
) -> None:
    """A worker takes 3, overruns their 2 s lock (its acks raise, counted as
    expired), takes them back and closes holding them: its last report says
    so, on the queue page, the stats API and /metrics."""
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(
        cluster=cluster,
        topic=topic,
        group_id=f"{topic}-workers",
        backend="share",
        message_timeout_ms=2000,
    )
    config = queue.config()
    config.ensure_topics(partitions=1)
    send(config, 3)
    with QueueClient(config) as client:
        taken = poll_until(client, 3)
        time.sleep(2.2)  # past the lock
        with pytest.raises(LockExpired):
            client.ack(taken[0])
        with pytest.raises(AcksRefused):
            client.ack_all(taken[1:])
        again = poll_until(client, 3)
        assert {m.delivery_count for m in again} == {2}
        member = client._consumer.member_id
    viewer = client_as("viewer")
    html = viewer.get(f"/queues/{topic}/").content.decode()
    row = html[html.index(f'data-consumer="{member}"') :]
    row = row[: row.index("</tr>")]
    assert "<td data-held>3</td>" in row and "<td data-expired>3</td>" in row, row
    assert "<td>6</td>" in row  # acquired: 3, then the same 3 again
    stats = viewer.get(f"/api/v1/queues/{topic}/stats").json()
    assert (stats["share_held"], stats["expired_locks_per_min"]) == (3, 0.6), stats
    [consumer] = viewer.get(f"/api/v1/queues/{topic}/share-group").json()["consumers"]
    assert consumer["client"] == member and not consumer["member"]
    assert (consumer["acquired"], consumer["held"], consumer["expired"]) == (6, 3, 3), consumer
    scraped = Client().get("/metrics").content.decode()
    assert f'kmqadmin_share_held{{queue="{topic}"}} 3.0' in scraped
    assert f'kmqadmin_share_expired_locks_per_minute{{queue="{topic}"}} 0.6' in scraped
