"""Pages over a record whose headers confluent-kafka cannot decode (a header
name that is not UTF-8, issue 17): each answers 200 and shows the record as
undecodable, with its coordinates and its key and value in hex."""

import pytest
from asgiref.sync import async_to_sync
from confluent_kafka import Producer

from kmqadmin.console.models import Queue
from kmqadmin.console.services.browsing import raw_headers
from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq import QueueConfig, markers
from kmqadmin.kmq import headers as h
from kmqadmin.scheduler import wire
from tests.console.conftest import client_as, register_schedules
from tests.console.test_live import connect, receive_until
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.raw_produce import RawRecord, produce_raw
from tests.users import user_with

pytestmark = pytest.mark.django_db

POISON = RawRecord(b"\x00\x01value", key=b"\xfekey", headers=[(b"\xff", b"x")])
KEY_HEX, VALUE_HEX = "fe 6b 65 79", "00 01 76 61 6c 75 65"


def test_the_dlq_page_and_api_show_it_and_redrive_sends_it_back(
    queue: QueueConfig, registered: Queue
) -> None:
    [offset] = produce_raw(queue.bootstrap_servers, queue.dlq_topic, [POISON])
    operator = client_as("operator")

    for query in ({"partition": 0}, {"partition": 0, "reason": "undecodable"}):
        page = operator.get(f"/queues/{queue.topic}/dlq/", query)
        assert page.status_code == 200
        text = page.content.decode()
        assert f'data-letter="{offset}"' in text and "undecodable" in text
        assert KEY_HEX in text and VALUE_HEX in text
    listed = operator.get(f"/api/v1/queues/{queue.topic}/dlq/", {"partition": 0})
    assert listed.status_code == 200
    [letter] = listed.json()["results"]
    assert (letter["reason"], letter["encoding"]) == ("undecodable", "hex")
    assert (letter["key"], letter["value"]) == (KEY_HEX, VALUE_HEX)

    assert operator.post(f"/queues/{queue.topic}/dlq/0/{offset}/redrive").status_code == 200
    [back] = wait_for(lambda: read_all(queue, queue.topic), 20, "the redriven copy")
    assert (back.key(), back.value()) == (POISON.key, POISON.value)
    assert back.headers() == [(h.MESSAGE_ID, f"{queue.dlq_topic}/0/{offset}".encode())]


def test_the_dlq_page_shows_its_headers_in_hex_when_opened(
    queue: QueueConfig, registered: Queue
) -> None:
    [offset] = produce_raw(queue.bootstrap_servers, queue.dlq_topic, [POISON])
    viewer = client_as("viewer")
    fragment = f"/queues/{queue.topic}/dlq/0/{offset}/headers"

    page = viewer.get(f"/queues/{queue.topic}/dlq/", {"partition": 0}).content.decode()
    assert "data-letter-headers" in page and f'hx-get="{fragment}?' in page

    opened = viewer.get(fragment)
    assert opened.status_code == 200
    assert "<code>ff</code> = <code>78</code>" in opened.content.decode()


def test_a_letter_whose_headers_cannot_be_read_says_so(
    queue: QueueConfig, registered: Queue
) -> None:
    viewer = client_as("viewer")
    [offset] = produce_raw(queue.bootstrap_servers, queue.dlq_topic, [POISON])

    missing = viewer.get(f"/queues/{queue.topic}/dlq/0/{offset + 1}/headers")
    assert missing.status_code == 200
    assert "could not be read" in missing.content.decode()
    past = viewer.get(f"/queues/{queue.topic}/dlq/0/{1 << 63}/headers")
    assert past.status_code == 400


def start_poison(queue: QueueConfig, poison: RawRecord = POISON) -> str:
    """The poison record on the queue, in flight: its kmq-id."""
    [offset] = produce_raw(queue.bootstrap_servers, queue.topic, [poison])
    producer = Producer(producer_config(queue.bootstrap_servers))
    producer.produce(
        queue.markers_topic, markers.start(600_000), markers.encode_key(0, offset), partition=0
    )
    assert producer.flush(10) == 0
    return f"{queue.topic}/0/{offset}"


def test_the_message_page_and_the_in_flight_api_show_it(
    queue: QueueConfig, registered: Queue
) -> None:
    message_id = start_poison(queue)
    viewer = client_as("viewer")

    story = viewer.get(f"/queues/{queue.topic}/messages/{message_id}")
    assert story.status_code == 200
    text = story.content.decode()
    assert "data-undecodable" in text and message_id in text
    assert KEY_HEX in text and VALUE_HEX in text

    def listed() -> list:
        answer = viewer.get(f"/api/v1/queues/{queue.topic}/in-flight/")
        assert answer.status_code == 200
        return answer.json()["results"]

    [row] = wait_for(listed, 20, "the in-flight row")
    assert (row["id"], row["key"]) == (message_id, KEY_HEX)


def test_the_message_page_shows_its_headers_in_hex(queue: QueueConfig, registered: Queue) -> None:
    headers = [(b"\xff\xfe", b"\x00v"), (b"ok", None), (b"ok", b"")]
    message_id = start_poison(queue, RawRecord(POISON.value, key=POISON.key, headers=headers))

    page = client_as("viewer").get(f"/queues/{queue.topic}/messages/{message_id}")

    assert page.status_code == 200
    text = page.content.decode()
    assert "data-raw-headers" in text and "data-raw-headers-error" not in text
    for name, value in ("fffe", "0076"), ("6f6b", "null"), ("6f6b", ""):
        assert f"<code>{name}</code> = <code>{value}</code>" in text


def test_the_message_page_answers_when_its_headers_cannot_be_read(
    queue: QueueConfig, registered: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    message_id = start_poison(queue)
    monkeypatch.setattr(raw_headers, "TIMEOUT_S", 0)  # the real read, given no time

    page = client_as("viewer").get(f"/queues/{queue.topic}/messages/{message_id}")

    assert page.status_code == 200
    text = page.content.decode()
    assert "data-raw-headers-error" in text and "could not be read" in text
    assert KEY_HEX in text  # the rest of the record is still shown


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_live_in_flight_view_shows_it(queue: QueueConfig, registered: Queue) -> None:
    message_id = start_poison(queue)
    socket = connect(f"/ws/queues/{queue.topic}/in-flight/", user_with("viewer"))

    async def scenario() -> str:
        connected, _ = await socket.connect()
        assert connected
        try:
            return await receive_until(socket, f'data-message="{message_id}"', 20)
        finally:
            await socket.disconnect()

    frame = async_to_sync(scenario)()
    assert "data-undecodable" in frame and KEY_HEX in frame


def test_the_schedules_page_lists_it_as_skipped(kafka, topic: str) -> None:
    admin = register_schedules(kafka.bootstrap_servers, topic)
    schedule = [(wire.EPOCH.encode(), b"4102444800"), (wire.TARGET_TOPIC.encode(), b"out")]
    good = RawRecord(b"hi", key=b"fine", headers=schedule)
    bad = RawRecord(POISON.value, key=POISON.key, headers=[*schedule, (b"\xff", b"x")])
    _, offset = produce_raw(kafka.bootstrap_servers, topic, [good, bad])

    def listed() -> str | None:
        page = admin.get(f"/schedules/{topic}/")
        assert page.status_code == 200
        text = page.content.decode()
        return text if "data-unfireable" in text else None

    text = wait_for(listed, 20, "the skipped record listed")
    assert 'data-schedule="fine"' in text
    assert f"{topic}/0/{offset}" in text and "undecodable" in text
    assert KEY_HEX in text and VALUE_HEX in text
