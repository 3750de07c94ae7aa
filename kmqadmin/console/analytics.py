"""The analytics pipeline run for the registered queues, one job per cluster,
and its per-minute rows kept for the console's charts."""

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from kmqadmin.console.models import Cluster, LifecycleMinute, Queue
from kmqadmin.kmq import names
from kmqadmin.pipeline.columns import MINUTE_COLUMNS
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.job import AnalyticsJob, PipelineConfig, RunResult
from kmqadmin.pipeline.session import spark_session

log = logging.getLogger(__name__)


def session() -> SparkSession:
    return spark_session(settings.SPARK_MASTER)


def jobs(spark: SparkSession) -> list[tuple[Cluster, AnalyticsJob]]:
    """A job per cluster with registered queues, writing under its own folder."""
    found = []
    for cluster in Cluster.objects.prefetch_related("queues"):
        queues = [topics(q) for q in cluster.queues.all()]
        if queues:
            config = PipelineConfig(
                bootstrap_servers=cluster.bootstrap,
                security=cluster.security(),
                queues=queues,
                output_dir=Path(settings.KMQ_ANALYTICS_DIR) / cluster.name,
                source=settings.KMQ_PIPELINE_SOURCE,
                lookback_ms=settings.KMQ_ANALYTICS_LOOKBACK_S * 1000,
            )
            found.append((cluster, AnalyticsJob(spark, config)))
    return found


def topics(queue: Queue) -> QueueTopics:
    """What the pipeline reads of a queue: a share queue has no markers
    topic, its clients' counts topic instead."""
    if queue.backend == "share":
        return QueueTopics.share(queue.topic, queue.dlq_topic, names.counts_topic(queue.topic))
    return QueueTopics(queue.topic, queue.markers_topic, queue.dlq_topic)


def run_batch(since_ms: int) -> list[tuple[Cluster, RunResult]]:
    results = []
    for cluster, job in jobs(session()):
        result = job.run_batch(since_ms)
        save(cluster, result)
        results.append((cluster, result))
    return results


def run_stream(
    checkpoint_dir: Path, trigger: dict, on_result: Callable[[Cluster, RunResult], None]
) -> list[StreamingQuery]:
    """A streaming query per cluster, each with its own checkpoint."""
    queries = []
    for cluster, job in jobs(session()):

        def apply(result: RunResult, cluster: Cluster = cluster) -> None:
            close_old_connections()  # Spark calls back on a thread of its own
            save(cluster, result)
            on_result(cluster, result)

        queries.append(job.run_stream(checkpoint_dir / cluster.name, apply, trigger))
    return queries


def save(cluster: Cluster, result: RunResult) -> int:
    """Upserts the run's minutes; a minute the run did not see is left as it was."""
    queues = {q.topic: q for q in cluster.queues.all()}
    rows = [
        LifecycleMinute(
            queue=queues[row["queue"]],
            minute=minute,
            **{name: row[name] for name in MINUTE_COLUMNS},
        )
        for row in result.minutes
        if row["queue"] in queues and (minute := _minute(row)) is not None
    ]
    LifecycleMinute.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["queue", "minute"],
        update_fields=list(MINUTE_COLUMNS),
    )
    return len(rows)


def _minute(row: dict) -> datetime | None:
    """The row's minute; None, logged, for one no datetime holds. The
    pipeline places no event there (events.placed), and one minute that
    slips through must not fail the save of the others, run after run."""
    try:
        return datetime.fromtimestamp(row["minute_ms"] / 1000, UTC)
    except (ValueError, OverflowError, OSError) as exc:
        log.warning("skipped analytics minute %s of %s: %s", row["minute_ms"], row["queue"], exc)
        return None
