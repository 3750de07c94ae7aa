"""A share queue's analytics beside a kmq queue's, on the real broker: one
batch run (our Kafka source) and one streaming run (Spark's), shared by the
tests of this module, since each costs Spark seconds.

The share queue's traffic goes through a real ShareQueueClient: six
messages and a delayed retry copy of m0; m3 released once, m4 and m5
rejected, the rest acked. Its counts topic also gets two records that are
not share_counts' JSON, and two whose minute no run can place.
"""

import json
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, headers
from kmqadmin.kmq.share.counts import minute_of
from kmqadmin.pipeline.columns import COUNTS, MINUTE_COLUMNS, QUANTILE_COLUMNS
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.job import AnalyticsJob, PipelineConfig, RunResult, read_log
from kmqadmin.pipeline.lifecycle import BROKER
from tests.pipeline import scenario
from tests.pipeline.conftest import KEEP
from tests.process import wait_for


@dataclass(frozen=True)
class Runs:
    kmq: QueueTopics
    share: QueueTopics
    batch: RunResult
    out: Path  # batch/ and stream/ below it


def _kmq_queue(kafka: EmbeddedBroker) -> QueueTopics:
    topic = f"t-{uuid.uuid4().hex[:10]}"
    queue = QueueTopics(topic, f"{topic}__markers", f"{topic}__undelivered")
    names = [queue.queue, queue.markers, queue.dlq]
    ensure_topics(kafka.bootstrap_servers, dict.fromkeys(names, 1), dict.fromkeys(names, KEEP))
    scenario.write(kafka.bootstrap_servers, queue, 1)
    scenario.write(kafka.bootstrap_servers, queue, 2)
    return queue


def _share_queue(kafka: EmbeddedBroker) -> QueueTopics:
    topic = f"t-{uuid.uuid4().hex[:10]}"
    config = QueueConfig(kafka.bootstrap_servers, topic, f"{topic}-workers", backend="share")
    config.ensure_topics(partitions=1)
    producer = QueueProducer(config)
    for i in range(6):
        producer.send(b"m%d" % i)
    producer.flush()
    raw = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0})
    # m0's delayed retry, as the scheduler writes it: a copy with the count.
    retry = [
        (headers.MESSAGE_ID, headers.message_id(topic, 0, 0).encode()),
        (headers.REDELIVERY_COUNT, headers.encode_count(1)),
    ]
    raw.produce(topic, value=b"m0", partition=0, headers=retry)
    raw.flush(10)
    _work(config)
    # Junk, and a count that is text: neither may count.
    raw.produce(config.counts_topic, key=b"junk", value=b"{not json")
    typo = {"minute": minute_of(now_ms()), "accepted": "7"}
    raw.produce(config.counts_topic, key=b"junk", value=json.dumps(typo).encode())
    # Minutes no run can place: year 33658, and one Spark's timestamps overflow on.
    for minute in (10**15, 2**63 - 1):
        far = {"minute": minute, "accepted": 1}
        raw.produce(config.counts_topic, key=b"junk", value=json.dumps(far).encode())
    raw.flush(10)
    return QueueTopics.share(topic, config.dlq_topic, config.counts_topic)


def _work(config: QueueConfig) -> None:
    """Acks 5 deliveries, releases m3 once, rejects m4 and m5; closing
    publishes the client's counts."""
    settled: Counter[str] = Counter()
    with QueueClient(config) as client:

        def done() -> bool:
            for m in client.poll(500, 0.2):
                if m.value == b"m3" and m.delivery_count == 1:
                    client.release(m)
                    settled["released"] += 1
                elif m.value in (b"m4", b"m5"):
                    client.reject(m, "bad")
                    settled["rejected"] += 1
                else:
                    client.ack(m)
                    settled["acked"] += 1
            return settled == Counter(acked=5, released=1, rejected=2)

        wait_for(done, 60, "8 deliveries settled on the share queue")


@pytest.fixture(scope="module")
def runs(spark: SparkSession, kafka: EmbeddedBroker, tmp_path_factory) -> Runs:
    kmq, share = _kmq_queue(kafka), _share_queue(kafka)
    out = tmp_path_factory.mktemp("share-analytics")

    def job(folder: str, source: str) -> AnalyticsJob:
        config = PipelineConfig(kafka.bootstrap_servers, [kmq, share], out / folder, source)
        return AnalyticsJob(spark, config)

    batch = job("batch", "python").run_batch(scenario.T)
    stream = job("stream", "spark").run_stream(
        out / "checkpoint", lambda _: None, {"availableNow": True}
    )
    stream.awaitTermination(120)
    assert not stream.isActive, "the availableNow stream did not finish in 120 s"
    assert stream.exception() is None
    return Runs(kmq, share, batch, out)


# The event log's columns before share queues (no tally): a streaming run
# upgraded in place reads files of both kinds.
_OLD_EVENT = (
    "queue string, role string, partition int, offset bigint, at_ms bigint, "
    "timestamp_type int, kmq_id string, first boolean, redelivered boolean, reason string, "
    "copy_partition int, copy_offset bigint, marker_type int, valid boolean, date date, hour int"
)


def _old_event_log(
    spark: SparkSession, kmq: QueueTopics, log: Path, at_ms: int = scenario.T
) -> None:
    """The kmq story's first record, logged by the previous version (in
    T's hour: where it is filed does not matter to these tests)."""
    first = (kmq.queue, "queue", 0, 0, at_ms, 0, f"{kmq.queue}/0/0", True, False)
    row = (*first, None, None, None, None, True, date(2026, 1, 1), 10)
    frame = spark.createDataFrame([row], _OLD_EVENT)
    frame.write.partitionBy("queue", "date", "hour").parquet(str(log))


def _table(spark: SparkSession, path: Path, key: tuple[str, ...]) -> dict[tuple, dict]:
    rows = spark.read.parquet(str(path)).drop("date", "hour").collect()
    return {tuple(row[k] for k in key): row.asDict() for row in rows}


def _facts(spark: SparkSession, runs: Runs, queue: QueueTopics) -> dict[str, dict]:
    """The batch run's facts of ``queue`` (partition 0 all), by kmq-id."""
    rows = _table(spark, runs.out / "batch" / "facts", ("queue", "kmq_id"))
    return {
        kmq_id: {k: v for k, v in row.items() if k != "partition"}
        for (q, kmq_id), row in rows.items()
        if q == queue.queue
    }


def test_share_minutes_count_first_copies_retries_releases_and_counts_with_null_quantiles(
    runs: Runs,
) -> None:
    rows = [row for row in runs.batch.minutes if row["queue"] == runs.share.queue]

    totals = {name: sum(row[name] for row in rows) for name in COUNTS}
    # produced: m0-m5; acked: the counts' accepted (m0 twice, m1, m2, m3's
    # second delivery); redelivered: m0's retry copy and m3's release.
    assert totals == {"produced": 6, "acked": 5, "redelivered": 2, "dead_lettered": 2}
    assert {row[name] for row in rows for name in QUANTILE_COLUMNS} == {None}
    assert runs.batch.skipped == {runs.kmq.queue: 1, runs.share.queue: 4}


def test_share_facts_know_copies_and_letters_and_leave_the_rest_to_the_broker(
    spark: SparkSession, runs: Runs
) -> None:
    facts = _facts(spark, runs, runs.share)

    ids = {headers.message_id(runs.share.queue, 0, i): i for i in range(6)}
    assert set(facts) == set(ids)
    for kmq_id, i in ids.items():
        fact = facts[kmq_id]
        rejected = i in (4, 5)
        assert fact["state"] == ("dead-lettered" if rejected else BROKER), i
        assert fact["dlq_reason"] == ("rejected" if rejected else None), i
        assert fact["copies"] == (2 if i == 0 else 1), i
        assert fact["produced_ms"] is not None
        unknown = ("delivery_starts", "deliveries", "acked_ms", "dead_lettered_ms")
        assert {name: fact[name] for name in unknown} == dict.fromkeys(unknown), i


def test_the_kmq_queue_beside_it_is_unchanged(spark: SparkSession, runs: Runs) -> None:
    assert _facts(spark, runs, runs.kmq) == scenario.facts(runs.kmq)
    minutes = {
        row["minute_ms"] - scenario.T: {k: v for k, v in row.items() if k in MINUTE_COLUMNS}
        for row in runs.batch.minutes
        if row["queue"] == runs.kmq.queue
    }
    scenario.assert_minutes(minutes)


def test_a_stream_with_sparks_source_writes_what_the_batch_with_ours_wrote(
    spark: SparkSession, runs: Runs
) -> None:
    for table, key in (("facts", ("queue", "kmq_id")), ("minutes", ("queue", "minute_ms"))):
        batch = _table(spark, runs.out / "batch" / table, key)
        stream = _table(spark, runs.out / "stream" / table, key)
        assert stream == batch, table
        assert {q for q, _ in batch} == {runs.kmq.queue, runs.share.queue}, table


def test_an_event_log_begun_by_the_previous_version_reads_with_this_ones_columns(
    spark: SparkSession, runs: Runs, tmp_path: Path
) -> None:
    _old_event_log(spark, runs.kmq, tmp_path / "events")
    columns = spark.read.parquet(str(runs.out / "stream" / "events")).schema

    [row] = read_log(spark, tmp_path / "events", scenario.T, columns).collect()

    assert (row["kmq_id"], row["valid"], row["tally"]) == (f"{runs.kmq.queue}/0/0", True, None)


def test_an_event_an_older_version_logged_at_a_time_no_run_can_place_reads_as_invalid(
    spark: SparkSession, runs: Runs, tmp_path: Path
) -> None:
    _old_event_log(spark, runs.kmq, tmp_path / "events", at_ms=10**15)
    columns = spark.read.parquet(str(runs.out / "stream" / "events")).schema

    [row] = read_log(spark, tmp_path / "events", scenario.T, columns).collect()

    assert (row["at_ms"], row["valid"]) == (10**15, False)
