"""`kmq run` (what `make run` calls) brings the whole product up, and down again."""

import http.cookiejar
import re
import urllib.parse
import urllib.request

from bench.common import read_topic
from kmqadmin.kafka.embedded import free_port, port_in_use
from tests.process import Run, wait_for


def test_run_serves_the_console_with_demo_queues_then_stops_everything(tmp_path) -> None:
    web_port, kafka_port = free_port(), free_port()
    run = Run(
        "--port", str(web_port), KMQ_DATA_DIR=str(tmp_path), KMQ_EMBEDDED_KAFKA_PORT=str(kafka_port)
    )
    try:
        url, user, password = run.up()
        page = log_in(url, user, password)
        assert "<h1>Queues</h1>" in page
        assert 'href="/queues/orders/?cluster=' in page
        assert 'href="/queues/emails/?cluster=' in page
        # demo traffic flows through the queue core: messages get start and end markers
        bootstrap = f"127.0.0.1:{kafka_port}"
        kinds = lambda: {r.value()[:1] for r in read_topic(bootstrap, "orders__markers", 3)}  # noqa: E731
        wait_for(lambda: {b"\x00", b"\x01"} <= kinds(), 60, "start and end markers")
    finally:
        code = run.stop()
    assert code == 0, "".join(run.lines)
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
