"""`kmq run` (what `make run` calls) brings the whole product up, and down again."""

import http.cookiejar
import re
import signal
import subprocess
import sys
import threading
import urllib.parse
import urllib.request

from kmqadmin.kafka.embedded import free_port, port_in_use
from kmqadmin.kafka.snapshot import read_topic
from tests.process import ROOT, env, wait_for


def test_run_serves_the_console_with_demo_queues_then_stops_everything(tmp_path) -> None:
    web_port, kafka_port = free_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "kmq", "run", "--port", str(web_port)],
        cwd=ROOT,
        env=env(KMQ_DATA_DIR=str(tmp_path), KMQ_EMBEDDED_KAFKA_PORT=str(kafka_port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        banner = wait_for(
            lambda: next((line for line in list(lines) if "kmqadmin is up" in line), None),
            120,
            "the 'kmqadmin is up' banner",
        )
        url, user, password = re.search(
            r"(http://\S+)\s+\(log in as (\S+) / (\S+)\)", banner
        ).groups()
        page = log_in(url, user, password)
        assert "<h1>Queues</h1>" in page
        assert "orders__markers" in page
        assert "emails__undelivered" in page
        # demo traffic flows through the queue core: messages get start and end markers
        bootstrap = f"127.0.0.1:{kafka_port}"
        kinds = lambda: {r.value()[:1] for r in read_topic(bootstrap, "orders__markers", 3)}  # noqa: E731
        wait_for(lambda: {b"\x00", b"\x01"} <= kinds(), 60, "start and end markers")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, "".join(lines)
    assert not port_in_use("127.0.0.1", web_port)
    assert not port_in_use("127.0.0.1", kafka_port)


def log_in(url: str, user: str, password: str) -> str:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    login = opener.open(url + "accounts/login/").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login).group(1)
    form = {"username": user, "password": password, "csrfmiddlewaretoken": token, "next": "/"}
    response = opener.open(url + "accounts/login/", urllib.parse.urlencode(form).encode())
    return response.read().decode()
