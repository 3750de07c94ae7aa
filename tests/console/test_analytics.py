"""`kmq analytics`, its beat task and the charts, on real traffic and the test DB."""

import logging
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from kmqadmin.console import analytics
from kmqadmin.console.models import LifecycleMinute, Queue
from kmqadmin.console.services import jobs
from kmqadmin.kmq import QueueClient, QueueProducer
from kmqadmin.pipeline.columns import COUNTS, MINUTE_COLUMNS
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.job import RunResult
from tests.console.conftest import client_as

pytestmark = pytest.mark.django_db


def _traffic(queue: Queue, sent: int, acked: int) -> None:
    """``sent`` messages through the real client, the first ``acked`` of them acked."""
    config = queue.config()
    producer = QueueProducer(config)
    for n in range(sent):
        producer.send(f"m{n}".encode())
    producer.flush()
    got = []
    with QueueClient(config) as client:
        deadline = time.monotonic() + 60
        while len(got) < sent and time.monotonic() < deadline:
            got += client.poll(timeout=0.5)
        assert len(got) == sent, f"polled {len(got)} of {sent} in 60 s"
        for message in got[:acked]:
            client.ack(message)
        client.flush()


def _totals(queue: Queue) -> tuple[int, int]:
    rows = LifecycleMinute.objects.filter(queue=queue)
    return sum(r.produced for r in rows), sum(r.acked for r in rows)


def test_command_and_beat_task_upsert_the_minutes(
    registered: Queue, spark, settings, tmp_path, eager_tasks
) -> None:
    settings.KMQ_ANALYTICS_DIR = tmp_path
    _traffic(registered, sent=6, acked=4)
    out = StringIO()

    call_command("kmq", "analytics", "--since", "1h", stdout=out)

    assert "local: 6 messages" in out.getvalue()
    assert _totals(registered) == (6, 4)
    acked = LifecycleMinute.objects.filter(queue=registered, acked__gt=0)
    assert all(r.latency_p50_ms is not None and r.latency_p50_ms >= 0 for r in acked)
    # The same minutes again: replaced, not added to.
    result = jobs.analytics.delay(3600).get()
    assert result == {"local": {"messages": 6, "minutes": LifecycleMinute.objects.count()}}
    assert _totals(registered) == (6, 4)
    assert (tmp_path / "local" / "facts" / f"queue={registered.topic}").is_dir()


def test_command_without_queues_says_what_to_do() -> None:
    with pytest.raises(CommandError, match="no queues registered"):
        call_command("kmq", "analytics", "--since", "1h")


def test_a_bad_window_is_refused_with_the_format() -> None:
    err = StringIO()
    with pytest.raises(CommandError, match="duration like 30m"):
        call_command("kmq", "analytics", "--since", "soon", stderr=err)


def _minute(queue: Queue, **values) -> None:
    now = timezone.now().replace(second=0, microsecond=0)
    LifecycleMinute.objects.create(queue=queue, minute=now, **values)


def test_pages_chart_the_minutes(registered: Queue) -> None:
    client: Client = client_as("viewer")
    empty = client.get(f"/queues/{registered.topic}/").content.decode()
    assert "No analytics yet" in empty

    _minute(registered, produced=9, acked=7, latency_p95_ms=1500.0)

    for url in ("/", f"/queues/{registered.topic}/"):
        page = client.get(url).content.decode()
        assert 'id="chart-counts"' in page and 'data-chart="chart-latency"' in page
        assert '"label": "Produced", "data": [9]' in page
    assert f'"label": "{registered.topic}", "data": [1.5]' in client.get("/").content.decode()


def _share_queue(beside: Queue) -> Queue:
    queue = Queue.objects.create(
        cluster=beside.cluster, topic=f"{beside.topic}-share", group_id="workers", backend="share"
    )
    queue.config().ensure_topics(partitions=1)
    return queue


def test_a_share_queue_is_analysed_from_its_counts_topic_not_markers(
    registered: Queue, spark
) -> None:
    share = _share_queue(registered)

    [(cluster, job)] = analytics.jobs(spark)

    assert cluster == registered.cluster
    assert list(job.config.queues) == [
        QueueTopics(registered.topic, registered.markers_topic, registered.dlq_topic),
        QueueTopics.share(share.topic, share.dlq_topic, f"{share.topic}__counts"),
    ]


def test_a_share_queues_page_charts_its_counts_and_says_why_there_is_no_latency_chart(
    registered: Queue,
) -> None:
    share = _share_queue(registered)
    _minute(share, produced=4, acked=3)  # quantiles null, as the pipeline writes them
    _minute(registered, produced=9, acked=7, latency_p95_ms=1500.0)
    client: Client = client_as("viewer")

    page = client.get(f"/queues/{share.topic}/").content.decode()

    assert 'id="chart-counts"' in page and '"label": "Produced", "data": [4]' in page
    assert (
        "Share queues have no per-message ack times (the broker keeps them), so no latency chart."
        in page
    )
    assert 'data-chart="chart-latency"' not in page
    dashboard = client.get("/").content.decode()
    assert f'"label": "{registered.topic}", "data": [1.5]' in dashboard
    assert f'"label": "{share.topic}"' not in dashboard  # no empty latency line


def test_a_minute_no_datetime_holds_is_skipped_and_the_others_saved(
    registered: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    now = timezone.now().replace(second=0, microsecond=0)
    measures = dict.fromkeys(MINUTE_COLUMNS) | dict.fromkeys(COUNTS, 0) | {"produced": 3}
    rows = [
        {"queue": registered.topic, "minute_ms": ms, **measures}
        for ms in (int(now.timestamp() * 1000), 10**15, 2**63 - 1)
    ]
    result = RunResult(since_ms=0, facts=3, minutes=rows, skipped={})

    with caplog.at_level(logging.WARNING):
        saved = analytics.save(registered.cluster, result)

    assert saved == 1
    assert list(LifecycleMinute.objects.values_list("minute", "produced")) == [(now, 3)]
    assert f"skipped analytics minute {10**15} of {registered.topic}" in caplog.text
