"""JVM settings for the suite's brokers and Spark sessions.

The suite runs dozens of short-lived brokers and a Spark session on two
cores, CPU-bound throughout: C2's compiler threads and G1's concurrent ones
compete with the tests for CPU a short-lived JVM never earns back. Set
before any JVM starts (brokers in pytest_configure, `kmq run` children,
Spark's drivers) and inherited by every process the suite starts; a value
already in the environment wins.
"""

import os
from pathlib import Path

import pytest

from kmqadmin.kafka.embedded.broker import JVM_PERFORMANCE_OPTS

# The client compiler only, and the serial collector, for every JVM the suite
# starts: half a broker's CPU (measured over tests/kafka/test_embedded.py and
# a queue benchmark: the same wall time, 45% less CPU).
SHORT_LIVED = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
SPARK_CONF = Path(__file__).parent / "spark"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault(JVM_PERFORMANCE_OPTS, " ".join(SHORT_LIVED))
    os.environ.setdefault("SPARK_CONF_DIR", str(SPARK_CONF))
