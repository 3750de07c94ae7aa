"""Payloads decoded by schema on the message (lifecycle) and DLQ pages, with
a real schema registry and the real broker; and the reasons shown when a
payload falls back to its raw rendering."""

import datetime
import decimal
import html
import json
import re

import pytest
from django.core.exceptions import ValidationError

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kafka.embedded.broker import free_port
from kmqadmin.kmq import QueueConfig, QueueProducer
from tests.console.conftest import client_as
from tests.fixtures.schemas import Framing
from tests.process import wait_for
from tests.queue_helpers import reject_taken
from tests.registry_gate import RegistryGate
from tests.schema_registry import CCOMPAT, SchemaRegistryServer

pytestmark = pytest.mark.django_db

ORDER = {"id": 7, "item": "book", "price": decimal.Decimal("12.50"), "tags": ["gift"]}
SHOWN_ORDER = ORDER | {"price": "12.50"}
SHIPPED = datetime.datetime(2026, 11, 24, 1, 2, 3, tzinfo=datetime.UTC)
SHOWN_SHIPMENT = {"id": 9, "destination": "Oslo", "shipped_at": "2026-11-24T01:02:03Z"}
THING = {"name": "pen", "qty": 3}
UNKNOWN_ID = b"\x00\x00\x0f\x42\x3f" + b"payload"
_DECODED = re.compile(r'<pre class="payload" data-kind="schema(?:-key)?">(.*?)</pre>', re.S)


def _use_registry(queue: Queue, url: str, **fields: str) -> None:
    Cluster.objects.filter(pk=queue.cluster_id).update(schema_registry_url=url, **fields)


def _decoded(page: bytes) -> list:
    """Every value a page shows decoded by schema, as JSON."""
    return [json.loads(html.unescape(found)) for found in _DECODED.findall(page.decode())]


def _dead_letter(queue: QueueConfig, records: list[tuple[bytes | None, bytes]]) -> list:
    """``records`` (key, value) sent, taken and rejected; returns the messages
    once each is in the DLQ."""
    producer = QueueProducer(queue)
    for key, value in records:
        producer.send(value=value, key=key)
    producer.flush()
    return reject_taken(queue, len(records), "schema test")[0]


def _dead_lettered_story(viewer, url: str) -> bytes:
    """The message page once its lifecycle shows the letter."""

    def page() -> bytes | None:
        answer = viewer.get(url)
        assert answer.status_code == 200
        return answer.content if b'data-event="dead-lettered"' in answer.content else None

    return wait_for(page, 30, f"{url} to show the letter")


def test_message_lifecycle_and_dlq_pages_show_payloads_decoded_by_schema(
    registered: Queue, queue: QueueConfig, tracker, framing: Framing, schema_registry
) -> None:
    _use_registry(registered, schema_registry.url)
    topic = queue.topic
    avro_key = framing.avro(topic, ORDER, "key")
    records = {
        "avro": (avro_key, framing.avro(topic, ORDER)),
        "protobuf": (None, framing.protobuf(topic, id=9, destination="Oslo", shipped_at=SHIPPED)),
        "json": (b"k-json", framing.json(topic, THING)),
        "plain": (b"k-plain", b"plain text"),
    }
    taken = {m.value: m for m in _dead_letter(queue, list(records.values()))}
    expected = {
        "avro": [SHOWN_ORDER, SHOWN_ORDER],  # value, then the framed key
        "protobuf": [SHOWN_SHIPMENT],
        "json": [THING],
        "plain": [],
    }
    viewer = client_as("viewer")
    for name, (_, value) in records.items():
        page = _dead_lettered_story(viewer, f"/queues/{topic}/messages/{taken[value].id}")
        assert _decoded(page) == expected[name], name
    assert b'data-schema="fallback"' in page and b"not framed for a schema registry" in page
    assert b'<pre class="payload" data-kind="text">plain text</pre>' in page

    letters = b"".join(
        viewer.get(f"/queues/{topic}/dlq/", {"partition": p}).content for p in range(3)
    )
    shown = _decoded(letters)
    for value in (SHOWN_ORDER, SHOWN_SHIPMENT, THING):
        assert value in shown
    assert letters.count(b'data-schema="decoded"') == 3
    assert letters.count(b'data-schema="fallback"') == 1

    # The message browser's view of each record, on the queue topic itself.
    cluster = registered.cluster.name
    for name, (_, value) in records.items():
        message = taken[value]
        where = f"/clusters/{cluster}/topics/{topic}/{message.partition}/{message.offset}"
        browsed = viewer.get(where).content.decode()
        if name == "plain":
            assert "decoded by schema" not in browsed
            continue
        assert "decoded by schema" in browsed, name
        shown = html.unescape(viewer.get(where, {"as": "schema"}).content.decode())
        for field, value in expected[name][0].items():
            pretty = json.dumps(value, indent=2).replace("\n", "\n  ")
            assert f'"{field}": {pretty}' in shown, (name, field)


def test_pages_fall_back_to_raw_with_the_reason(
    registered: Queue, queue: QueueConfig, tracker, framing: Framing, schema_registry
) -> None:
    topic = queue.topic
    avro = framing.avro(topic, ORDER)
    [unknown, known] = _dead_letter(queue, [(None, UNKNOWN_ID), (None, avro)])
    if unknown.value != UNKNOWN_ID:
        unknown, known = known, unknown
    viewer = client_as("viewer")

    def pages(message) -> bytes:
        dlq = b"".join(
            viewer.get(f"/queues/{topic}/dlq/", {"partition": p}).content for p in range(3)
        )
        story = viewer.get(f"/queues/{topic}/messages/{message.id}")
        assert story.status_code == 200
        return story.content + dlq

    assert b"data-schema" not in pages(known)  # no registry: raw renderings only

    _use_registry(registered, schema_registry.url)
    assert b"unknown schema id 999999: the registry has no such schema" in pages(unknown)

    _use_registry(registered, f"http://127.0.0.1:{free_port()}{CCOMPAT}")
    down = pages(known)
    assert b"schema registry unreachable at http://127.0.0.1:" in down
    assert _decoded(down) == [] and b'<pre class="payload" data-kind=' in down


def test_registry_credentials_are_read_from_their_reference(
    registered: Queue,
    queue: QueueConfig,
    tracker,
    framing: Framing,
    schema_registry: SchemaRegistryServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Apicurio 2.1 checks credentials only through an OIDC server, which
    these machines cannot run: what is proven is that the password is a
    reference (never stored), read when a page decodes, and its absence a
    reason on the page rather than an error."""
    cluster = registered.cluster
    cluster.schema_registry_url = schema_registry.url
    cluster.schema_registry_username = "reader"
    cluster.schema_registry_password = "s3cret"
    with pytest.raises(ValidationError, match="never the secret itself"):
        cluster.full_clean()
    cluster.schema_registry_password = "env:KMQ_TEST_REGISTRY_PASSWORD"
    cluster.full_clean()
    cluster.save()

    [message] = _dead_letter(queue, [(None, framing.avro(queue.topic, ORDER))])
    url = f"/queues/{queue.topic}/messages/{message.id}"
    viewer = client_as("viewer")
    monkeypatch.delenv("KMQ_TEST_REGISTRY_PASSWORD", raising=False)
    missing = viewer.get(url)
    assert missing.status_code == 200
    assert b"environment variable KMQ_TEST_REGISTRY_PASSWORD is not set" in missing.content

    monkeypatch.setenv("KMQ_TEST_REGISTRY_PASSWORD", "s3cret")
    settings = Cluster.objects.get(pk=cluster.pk).schema_registry()
    assert settings is not None and settings.password == "s3cret"
    assert _decoded(viewer.get(url).content) == [SHOWN_ORDER]


def test_a_registry_that_asks_for_a_login_gets_the_clusters_credentials(
    registered: Queue,
    queue: QueueConfig,
    tracker,
    framing: Framing,
    schema_registry: SchemaRegistryServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Behind a gate asking for HTTP Basic: the right login decodes, a wrong
    one is a reason on the page (the registry's 401), never an error."""
    [message] = _dead_letter(queue, [(None, framing.avro(queue.topic, ORDER))])
    url = f"/queues/{queue.topic}/messages/{message.id}"
    upstream = schema_registry.url.removesuffix(CCOMPAT)
    viewer = client_as("viewer")
    with RegistryGate(upstream, "reader", "s3cret") as gate:
        for password, shown in (("wrong", []), ("s3cret", [SHOWN_ORDER])):
            monkeypatch.setenv("KMQ_TEST_GATE_PASSWORD", password)
            _use_registry(
                registered,
                gate.origin + CCOMPAT,
                schema_registry_username="reader",
                schema_registry_password="env:KMQ_TEST_GATE_PASSWORD",
            )
            page = viewer.get(url)
            assert page.status_code == 200
            assert _decoded(page.content) == shown, password
            if not shown:
                assert b"HTTP 401" in page.content
    assert gate.refused >= 1
