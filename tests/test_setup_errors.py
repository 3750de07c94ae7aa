"""Setup mistakes give one line naming the variable to fix, never a traceback."""

import pytest

from kmqadmin.kafka.embedded.broker import free_port
from tests.process import manage


def assert_one_line(stderr: str, *needles: str) -> None:
    assert "Traceback" not in stderr
    assert stderr.strip().count("\n") == 0, stderr
    for needle in needles:
        assert needle in stderr


def test_unreachable_broker(tmp_path) -> None:
    bootstrap = f"127.0.0.1:{free_port()}"
    result = manage(
        "kmq", "run", "--no-demo", KAFKA_BOOTSTRAP_SERVERS=bootstrap, KMQ_DATA_DIR=str(tmp_path)
    )
    assert result.returncode != 0
    assert_one_line(result.stderr, "KAFKA_BOOTSTRAP_SERVERS", bootstrap)


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("postgres://nobody@127.0.0.1:1/nowhere", "database is unreachable"),
        ("nosuchdb://x/y", "not supported"),
    ],
)
def test_wrong_database_url(tmp_path, url: str, needle: str) -> None:
    result = manage("migrate", DATABASE_URL=url, KMQ_DATA_DIR=str(tmp_path))
    assert result.returncode != 0
    assert_one_line(result.stderr, "DATABASE_URL", needle)


def test_broker_command_refuses_when_an_external_broker_is_configured(tmp_path) -> None:
    result = manage(
        "kmq", "broker", KAFKA_BOOTSTRAP_SERVERS="kafka:9092", KMQ_DATA_DIR=str(tmp_path)
    )
    assert result.returncode != 0
    assert_one_line(result.stderr, "KAFKA_BOOTSTRAP_SERVERS")
