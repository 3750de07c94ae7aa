"""What every benchmark shares: the broker it runs on and how it reports."""

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kmqadmin.kafka.embedded import EmbeddedBroker


def rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def report(sections: dict[str, Callable[[str], object]]) -> None:
    """Runs each section against one embedded broker and prints one JSON document,
    with the broker's version, start time and resident memory."""
    started = time.monotonic()
    with EmbeddedBroker() as broker:
        result: dict[str, object] = {
            "broker": f"embedded Apache Kafka {broker.version}",
            "broker_start_s": round(time.monotonic() - started, 2),
            "cores": os.cpu_count(),
        }
        for name, section in sections.items():
            result[name] = section(broker.bootstrap_servers)
        result["broker_rss_mb_at_end"] = round(broker.rss_bytes() / 2**20)
    print(json.dumps(result, indent=2))
