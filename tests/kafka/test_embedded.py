"""The embedded broker is a real Apache Kafka over TCP, keeps its data dir, and cleans up."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import ConfigResource

from kmqadmin.kafka.admin.topics import (
    admin_client,
    cluster_metadata,
    ensure_topics,
    partition_counts,
)
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kafka.client.errors import EmbeddedBrokerError
from kmqadmin.kafka.embedded.broker import (
    CLASS_ARCHIVE,
    JVM_PERFORMANCE_OPTS,
    EmbeddedBroker,
    _cause,
    port_in_use,
)
from tests.broker import SUITE_SETTINGS
from tests.process import ROOT, manage, wait_for


def test_produce_consume_round_trip_over_tcp(kafka: EmbeddedBroker, topic: str) -> None:
    assert ensure_topics(kafka.bootstrap_servers, {topic: 3}) == [topic]
    producer = Producer(producer_config(kafka.bootstrap_servers))
    sent = {f"k{i}".encode(): f"v{i}".encode() for i in range(300)}
    for key, value in sent.items():
        producer.produce(topic, key=key, value=value, headers={"h": b"x"})
    assert producer.flush(10) == 0

    consumer = Consumer(consumer_config(kafka.bootstrap_servers, f"{topic}-group"))
    consumer.subscribe([topic])
    received: dict[bytes, bytes] = {}
    started = time.monotonic()
    try:
        while len(received) < len(sent) and time.monotonic() - started < 30:
            for message in consumer.consume(500, timeout=0.5):
                assert message.error() is None
                assert message.headers() == [("h", b"x")]
                received[message.key()] = message.value()
    finally:
        consumer.close()
    assert received == sent
    # group.initial.rebalance.delay.ms=0 keeps the first group join short.
    assert time.monotonic() - started < 15


def test_ensure_topics_is_idempotent_and_keeps_partition_counts(
    kafka: EmbeddedBroker, topic: str
) -> None:
    ensure_topics(kafka.bootstrap_servers, {topic: 2})
    assert ensure_topics(kafka.bootstrap_servers, {topic: 5}) == []
    assert partition_counts(
        cluster_metadata(kafka.bootstrap_servers), [topic, f"{topic}-absent"]
    ) == {
        topic: 2,
        f"{topic}-absent": None,
    }


def test_stop_ends_the_process_and_frees_the_port() -> None:
    broker = EmbeddedBroker().start()
    assert port_in_use(broker.host, broker.port)
    broker.stop()
    assert not broker.running
    assert not port_in_use(broker.host, broker.port)


def test_a_kept_data_dir_keeps_topics_and_records_across_a_restart(tmp_path, topic: str) -> None:
    with EmbeddedBroker(data_dir=tmp_path) as broker:
        ensure_topics(broker.bootstrap_servers, {topic: 2})
        producer = Producer(producer_config(broker.bootstrap_servers))
        producer.produce(topic, b"kept", partition=1)
        assert producer.flush(10) == 0
    with EmbeddedBroker(data_dir=tmp_path) as broker:
        assert partition_counts(cluster_metadata(broker.bootstrap_servers), [topic]) == {topic: 2}
        consumer = Consumer(consumer_config(broker.bootstrap_servers, f"{topic}-g"))
        consumer.subscribe([topic])
        try:
            got = wait_for(lambda: consumer.consume(10, 0.5), 30, "the kept record")
        finally:
            consumer.close()
        assert [(m.partition(), m.value()) for m in got] == [(1, b"kept")]


def test_a_data_dir_of_another_cluster_is_refused_naming_the_fix(tmp_path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "meta.properties").write_text("node.id=7\ncluster.id=other\n")
    with pytest.raises(EmbeddedBrokerError, match=r"another cluster.*KMQ_DATA_DIR"):
        EmbeddedBroker(data_dir=tmp_path).start()


def test_kill_9_of_the_owner_takes_the_broker_down() -> None:
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from kmqadmin.kafka.embedded.broker import EmbeddedBroker\n"
            "b = EmbeddedBroker().start()\n"
            "print(b.port, flush=True)\n"
            "time.sleep(600)\n",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    port = int(owner.stdout.readline())
    assert port_in_use("127.0.0.1", port)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    wait_for(lambda: not port_in_use("127.0.0.1", port), 10, "the orphaned broker to exit")


def test_missing_jars_is_one_line_naming_the_fix(tmp_path) -> None:
    result = manage("kmq", "broker", KMQ_KAFKA_JARS=str(tmp_path))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "make deps" in result.stderr and "KMQ_KAFKA_JARS" in result.stderr


def test_a_failed_format_is_told_by_its_exception_not_the_end_of_its_stack_trace() -> None:
    trace = (
        "Exception in thread main java.lang.RuntimeException: Invalid cluster.id\n"
        "\tat kafka.tools.StorageTool.main(StorageTool.scala:56)\n"
        "Caused by: java.io.IOException: No space left on device\n"
        "\t... 8 more\n"
    )
    assert _cause(trace) == "Caused by: java.io.IOException: No space left on device"
    assert _cause(trace.split("Caused by")[0]) == (
        "Exception in thread main java.lang.RuntimeException: Invalid cluster.id"
    )
    assert _cause("just one line\n") == "just one line"
    assert _cause("") == "no output"


@pytest.mark.skipif(
    bool(os.environ.get("KAFKA_BOOTSTRAP_SERVERS")), reason="the suite runs on the user's cluster"
)
def test_the_suites_broker_runs_with_the_suites_overrides(kafka: EmbeddedBroker) -> None:
    """Overrides reach the broker's server properties: on the suite's brokers
    records never expire by time (tests/broker.py), so those stamped long ago stay."""
    admin = admin_client(kafka.bootstrap_servers)
    [node] = cluster_metadata(kafka.bootstrap_servers).brokers
    resource = ConfigResource(ConfigResource.Type.BROKER, str(node))
    config = admin.describe_configs([resource])[resource].result(10)
    for key, value in SUITE_SETTINGS.items():
        assert config[key].value == value


def test_kafkas_jvm_performance_opts_replace_the_collector_flags(tmp_path, monkeypatch) -> None:
    """The variable kafka-run-class.sh reads, with its meaning: unset, G1."""
    broker = EmbeddedBroker(data_dir=tmp_path)
    monkeypatch.setenv(JVM_PERFORMANCE_OPTS, "-XX:+UseSerialGC  -XX:TieredStopAtLevel=1")
    jvm = broker._jvm("java")
    assert "-XX:+UseSerialGC" in jvm and "-XX:TieredStopAtLevel=1" in jvm
    assert "-XX:+UseG1GC" not in jvm
    monkeypatch.delenv(JVM_PERFORMANCE_OPTS)
    assert "-XX:+UseG1GC" in broker._jvm("java")


def test_a_broker_maps_the_class_archive_make_deps_built(tmp_path) -> None:
    """Its classes come from the archive (kafka/embedded/class_archive.py),
    not from the jars: the JVM maps the file, and logs no CDS warning (one
    it could not use, made by another JVM or for other jars, is warned of)."""
    with EmbeddedBroker(data_dir=tmp_path) as broker:
        assert broker.process is not None
        maps = Path(f"/proc/{broker.process.pid}/maps").read_text()
        assert str(broker.jars / CLASS_ARCHIVE) in maps
    assert "[cds]" not in broker.log_path.read_text()
