"""`manage.py kmq broker --brokers 3`: the cluster a user can try locally."""

import re
import signal
import subprocess
import sys
import threading

from confluent_kafka.admin import ConfigResource, ResourceType

from kmqadmin.kafka.admin.topics import admin_client, ensure_topics
from kmqadmin.kafka.embedded.broker import free_port, port_in_use
from tests.process import ROOT, env, wait_for


def test_three_brokers_replicate_every_topic_and_stop_on_ctrl_c(tmp_path) -> None:
    port = wait_for(_three_free_ports, 10, "three consecutive free ports")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "kmq", "broker", "--brokers", "3", "--port", str(port)],
        cwd=ROOT,
        env=env(KMQ_DATA_DIR=str(tmp_path)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    try:
        banner = wait_for(
            lambda: next((line for line in list(lines) if "cluster of 3 nodes" in line), None),
            180,
            "the cluster's banner",
            evidence=lambda: "".join(lines),
        )
        bootstrap = re.search(r"KAFKA_BOOTSTRAP_SERVERS=(\S+) ", banner).group(1)
        assert bootstrap == ",".join(f"127.0.0.1:{port + i}" for i in range(3))
        admin = admin_client(bootstrap)
        assert len(admin.list_topics(timeout=10).brokers) == 3
        ensure_topics(bootstrap, {"replicated": 2})
        partitions = admin.list_topics("replicated", timeout=10).topics["replicated"].partitions
        assert [len(p.replicas) for p in partitions.values()] == [3, 3]
        resource = ConfigResource(ResourceType.TOPIC, "replicated")
        configs = admin.describe_configs([resource])[resource].result(10)
        assert configs["min.insync.replicas"].value == "2"
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        code = proc.wait(timeout=60)
    output = "".join(lines)
    assert code == 0, output
    assert "Traceback" not in output, output


def _three_free_ports() -> int | None:
    port = free_port()
    return port if not any(port_in_use("127.0.0.1", port + i) for i in (1, 2)) else None
