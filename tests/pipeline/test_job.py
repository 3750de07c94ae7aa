"""The analytics job on a known story (scenario.py), read from the real broker."""

import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.job import AnalyticsJob, PipelineConfig, RunResult
from kmqadmin.pipeline.session import NAME, SPARK_KAFKA
from tests.pipeline import scenario
from tests.pipeline.conftest import KEEP, one_partition_queue
from tests.pipeline.scenario import T
from tests.raw_produce import RawRecord, produce_raw

SOURCES = ["spark", "python"]  # KMQ_PIPELINE_SOURCE: Spark's Kafka source, and ours


def _job(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics, out: Path, source: str
) -> AnalyticsJob:
    config = PipelineConfig(kafka.bootstrap_servers, [queue], out, source=source)
    job = AnalyticsJob(spark, config)
    assert job.format == {"spark": SPARK_KAFKA, "python": NAME}[source]
    return job


def _facts(spark: SparkSession, out: Path) -> dict[str, dict]:
    rows = spark.read.parquet(str(out / "facts")).drop("date", "hour", "partition").collect()
    return {row["kmq_id"]: row.asDict() for row in rows}


def _minutes(result: RunResult) -> dict[int, dict]:
    """By ms after T, without the key columns (``result`` is left as it is:
    tests share one)."""
    return {
        row["minute_ms"] - T: {k: v for k, v in row.items() if k not in ("minute_ms", "queue")}
        for row in result.minutes
        if row["queue"]
    }


@dataclass(frozen=True)
class Story:
    """Both parts of the story on one queue, and a batch run of it per source."""

    queue: QueueTopics
    out: Path  # a folder per source
    results: dict[str, RunResult]


@pytest.fixture(scope="module")
def story(
    spark: SparkSession, kafka: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory
) -> Story:
    """Run once for the tests that only read it: a batch run is tens of
    seconds of Spark on a busy machine."""
    queue = one_partition_queue(kafka, f"t-{uuid.uuid4().hex[:10]}")
    scenario.write(kafka.bootstrap_servers, queue, 1)
    scenario.write(kafka.bootstrap_servers, queue, 2)
    out = tmp_path_factory.mktemp("story")
    results = {s: _job(spark, kafka, queue, out / s, s).run_batch(T) for s in SOURCES}
    return Story(queue, out, results)


@pytest.mark.parametrize("source", SOURCES)
def test_batch_run_gives_the_facts_and_minutes_of_the_story(
    spark: SparkSession, story: Story, source: str
) -> None:
    result = story.results[source]

    facts = _facts(spark, story.out / source)
    assert facts == scenario.facts(story.queue)
    assert result.facts == 7
    assert result.skipped == {story.queue.queue: 1}
    scenario.assert_minutes(_minutes(result))


def test_a_dead_letter_not_yet_redriven_is_the_final_state(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics, tmp_path: Path
) -> None:
    scenario.write(kafka.bootstrap_servers, queue, 1)

    _job(spark, kafka, queue, tmp_path, "python").run_batch(T)

    c = _facts(spark, tmp_path)[f"{queue.queue}/0/2"]
    assert (c["state"], c["dead_lettered_ms"], c["dlq_reason"]) == (
        "dead-lettered",
        T + 4000,
        "rejected",
    )


def test_a_window_keeps_the_facts_of_messages_produced_in_it(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics, tmp_path: Path
) -> None:
    scenario.write(kafka.bootstrap_servers, queue, 1)

    result = _job(spark, kafka, queue, tmp_path, "python").run_batch(T + 3_600_000)

    assert result.facts == 0
    assert result.minutes == []


def _rows(frame: DataFrame) -> list[tuple]:
    """Every row with every column, in one order: frames compared exactly."""
    rows = frame.select(sorted(frame.columns)).collect()
    return sorted((tuple(row) for row in rows), key=repr)


def test_spark_and_python_sources_give_identical_facts_and_minutes(
    spark: SparkSession, story: Story
) -> None:
    by_spark, by_python = story.results["spark"], story.results["python"]
    assert by_spark.facts == by_python.facts == 7
    assert by_spark.skipped == by_python.skipped == {story.queue.queue: 1}
    assert sorted(by_spark.minutes, key=repr) == sorted(by_python.minutes, key=repr)
    assert len(by_spark.minutes) == 3
    for table in ("facts", "minutes"):
        written = {s: _rows(spark.read.parquet(str(story.out / s / table))) for s in SOURCES}
        assert written["spark"] == written["python"], table
        assert written["spark"], table


def test_an_unknown_source_names_the_setting(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics, tmp_path: Path
) -> None:
    config = PipelineConfig(kafka.bootstrap_servers, [queue], tmp_path, source="nonsense")
    with pytest.raises(ValueError, match="KMQ_PIPELINE_SOURCE"):
        AnalyticsJob(spark, config)


def _stream_once(job: AnalyticsJob, checkpoint: Path) -> tuple[int, list[RunResult]]:
    """Runs the stream until it has read what is there; rows read, results."""
    results: list[RunResult] = []
    query = job.run_stream(checkpoint, results.append, {"availableNow": True})
    query.awaitTermination(120)
    assert not query.isActive, "the availableNow stream did not finish in 120 s"
    return sum(p["numInputRows"] for p in query.recentProgress), results


@pytest.mark.parametrize("source", SOURCES)
def test_stream_reads_new_records_only_and_resumes_from_its_checkpoint(
    spark: SparkSession, kafka: EmbeddedBroker, queue: QueueTopics, tmp_path: Path, source: str
) -> None:
    job = _job(spark, kafka, queue, tmp_path / "out", source)
    checkpoint = tmp_path / "checkpoint"
    first = scenario.write(kafka.bootstrap_servers, queue, 1)

    read, results = _stream_once(job, checkpoint)

    assert read == first
    c = _facts(spark, tmp_path / "out")[f"{queue.queue}/0/2"]
    assert c["state"] == "dead-lettered"
    zero = next(row for row in results[-1].minutes if row["minute_ms"] == T)
    assert zero["produced"] == 4

    second = scenario.write(kafka.bootstrap_servers, queue, 2)
    # A new job object, as after a restart: only the checkpoint remembers.
    read, results = _stream_once(_job(spark, kafka, queue, tmp_path / "out", source), checkpoint)

    assert read == second
    facts = _facts(spark, tmp_path / "out")
    assert len(facts) == 7
    assert facts[f"{queue.queue}/0/2"]["state"] == "acked"
    assert facts[f"{queue.queue}/0/1"]["deliveries"] == 3
    by_minute = {row["minute_ms"] - T: row for row in results[-1].minutes}
    assert (by_minute[0]["produced"], by_minute[0]["acked"]) == (7, 4)
    logged = spark.read.parquet(str(tmp_path / "out" / "events"))
    assert logged.select("role", "partition", "offset").distinct().count() == first + second
    assert logged.count() == first + second + scenario.RANGE_EVENTS_BEYOND_RECORDS


# CreateTimes no run can place: before 1970, after year 9999, and overflowing
# a microsecond timestamp column both ways. Kafka 4's default broker takes the
# negative ones; a topic whose message.timestamp.after.max.ms is raised (the
# default before Kafka 4) takes any. Spark's own source fails the read on a
# time that overflows (KAFKA_MALFORMED_RECORD_TIMESTAMP): ours alone reads those.
UNPLACED = {"spark": (-1, 10**15), "python": (-1, 10**15, 10**16, -(10**16))}
ANY_TIME = {**KEEP, "message.timestamp.after.max.ms": str(2**63 - 1)}


def _any_time_queue(kafka: EmbeddedBroker, topic: str) -> QueueTopics:
    queue = QueueTopics(topic, f"{topic}__markers", f"{topic}__undelivered")
    names = [queue.queue, queue.markers, queue.dlq]
    ensure_topics(kafka.bootstrap_servers, dict.fromkeys(names, 1), dict.fromkeys(names, ANY_TIME))
    return queue


def _unplaced(kafka: EmbeddedBroker, topic: str, source: str) -> int:
    records = [RawRecord(b"payload", timestamp=at) for at in UNPLACED[source]]
    return len(produce_raw(kafka.bootstrap_servers, topic, records))


@pytest.mark.parametrize("source", SOURCES)
def test_records_at_times_no_run_can_place_are_skipped_and_counted(
    spark: SparkSession, kafka: EmbeddedBroker, topic: str, tmp_path: Path, source: str
) -> None:
    queue = _any_time_queue(kafka, topic)
    scenario.write(kafka.bootstrap_servers, queue, 1)
    scenario.write(kafka.bootstrap_servers, queue, 2)
    bad = _unplaced(kafka, queue.queue, source) + _unplaced(kafka, queue.dlq, source)

    for _ in range(2):  # the next run as well
        result = _job(spark, kafka, queue, tmp_path, source).run_batch(T)

        assert _facts(spark, tmp_path) == scenario.facts(queue)
        assert result.skipped == {queue.queue: 1 + bad}
        scenario.assert_minutes(_minutes(result))


def test_a_stream_skips_records_at_times_no_run_can_place_and_runs_on(
    spark: SparkSession, kafka: EmbeddedBroker, topic: str, tmp_path: Path
) -> None:
    queue = _any_time_queue(kafka, topic)
    job = _job(spark, kafka, queue, tmp_path / "out", "python")
    checkpoint = tmp_path / "checkpoint"
    first = scenario.write(kafka.bootstrap_servers, queue, 1)
    bad = _unplaced(kafka, queue.dlq, "python")

    read, _ = _stream_once(job, checkpoint)

    assert read == first + bad
    second = scenario.write(kafka.bootstrap_servers, queue, 2)
    bad = _unplaced(kafka, queue.dlq, "python")
    read, results = _stream_once(job, checkpoint)

    assert read == second + bad
    assert _facts(spark, tmp_path / "out") == scenario.facts(queue)
    scenario.assert_minutes(_minutes(results[-1]))
    # Not logged: an event with no time belongs to no hour a run recomputes.
    logged = spark.read.parquet(str(tmp_path / "out" / "events")).count()
    assert logged == first + second + scenario.RANGE_EVENTS_BEYOND_RECORDS
