"""Data masking end to end, on the real broker and database: a message with a
secret in a JSON field, a secret header and a secret a pattern matches, one
rejected into the DLQ and one left in flight, read through every surface
that shows records. A viewer never finds a secret (in clear, hex or base64);
an admin does; an operator only while the queue leaves operators clear."""

import asyncio
import base64
import html
import json
import re

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from confluent_kafka import Producer
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, names
from tests.console.test_live import connect, receive_until
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until, reject_taken
from tests.users import user_with as new_user

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

CARD = "4111-CARD-SECRET"  # in a JSON field: $.card
TOKEN = "tok-HEADER-SECRET"  # in the header x-auth
PIN = "PIN-9876-5432"  # in the text and the key: a pattern
SECRETS = (CARD, TOKEN, PIN)
RULES = {
    "mask_json_paths": "$.card",
    "mask_headers": "x-auth",
    "mask_patterns": r"PIN-\d{4}-\d{4}",
}


def user_with(role: str) -> User:
    """One user per role, however many surfaces log in with it."""
    return User.objects.filter(username=role).first() or new_user(role)


def client_as(role: str) -> Client:
    client = Client()
    client.force_login(user_with(role))
    return client


def api_as(role: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(user_with(role))
    return client


def forms_of(secret: str) -> list[str]:
    """Every way a page could spell it: text, hex, base64."""
    data = secret.encode()
    return [secret, data.hex(), base64.b64encode(data).decode()]


# A line of the pages' hex dumps: offset, then up to 16 bytes in hex.
DUMP_LINE = re.compile(r"(?:^|>)[0-9a-f]{8}  ((?:[0-9a-f]{2} ?){1,16})", re.MULTILINE)


def undumped(text: str) -> str:
    """The bytes of every hex dump in ``text``, joined: a dump spreads a
    secret over lines, in hex and in its ASCII column."""
    hexed = "".join(line.replace(" ", "") for line in DUMP_LINE.findall(text))
    return bytes.fromhex(hexed).decode(errors="replace")


def leaked(text: str) -> list[str]:
    text += "\n" + undumped(text)
    return [form for secret in SECRETS for form in forms_of(secret) if form in text]


def write(queue: QueueConfig, n: int) -> None:
    producer = QueueProducer(queue)
    for i in range(n):
        value = json.dumps({"card": CARD, "n": f"{i} {PIN}"}).encode()
        producer.send(value, f"k{i}-{PIN}".encode(), {"x-auth": TOKEN.encode()}, partition=0)
    producer.flush()


def set_rules(mask_operators: bool) -> None:
    """Through the API, as an admin edits a queue (and audited as such)."""
    topic = Queue.objects.get().topic
    body = RULES | {"mask_operators": mask_operators}
    answer = api_as("admin").patch(f"/api/v1/queues/{topic}/", body, format="json")
    assert answer.status_code == 200, answer.content


def surfaces(role: str, registered: Queue, ids: dict, letter) -> dict[str, str]:
    """Every page, fragment and API answer that shows these records."""
    client, api = client_as(role), api_as(role)
    topic, dlq = registered.topic, registered.dlq_topic
    p, o = letter.partition(), letter.offset()
    browse = "/clusters/local/topics/{}/browse?partition=0&start=oldest"
    shown = {
        "message page (rejected)": client.get(f"/queues/{topic}/messages/{ids['rejected']}"),
        "message page (in flight)": client.get(f"/queues/{topic}/messages/{ids['open']}"),
        "dlq page": client.get(f"/queues/{topic}/dlq/", {"partition": p}),
        "letter headers": client.get(f"/queues/{topic}/dlq/{p}/{o}/headers"),
        "queue page": client.get(f"/queues/{topic}/"),
        "browser list": client.get(browse.format(topic)),
        "browser dlq list": client.get(browse.format(dlq).replace("partition=0", f"partition={p}")),
        "api in flight": api.get(f"/api/v1/queues/{topic}/in-flight/"),
        "api dlq": api.get(f"/api/v1/queues/{topic}/dlq/", {"partition": p}),
        "api records": api.get(
            f"/api/v1/clusters/local/topics/{topic}/records/", {"start": "oldest"}
        ),
    }
    for name, (t, part, off) in {"queue": (topic, 0, 0), "dlq": (dlq, p, o)}.items():
        for rendering in ("json", "text", "hex"):
            url = f"/clusters/local/topics/{t}/{part}/{off}?as={rendering}"
            shown[f"browser message ({name}, {rendering})"] = client.get(url)
        api_record = f"/api/v1/clusters/local/topics/{t}/records/{part}/{off}"
        shown[f"api record ({name})"] = api.get(api_record)
    for name, answer in shown.items():
        assert answer.status_code == 200, (name, answer.status_code)
    return {name: answer.content.decode() for name, answer in shown.items()}


def in_flight_frames(roles: list[str], topic: str, message_id: str) -> list[str]:
    """The in-flight live fragment as each role's socket gets it, all open at
    once: sockets that shared a feed would get one fragment."""
    users = [user_with(role) for role in roles]

    async def scenario() -> list[str]:
        sockets, frames = [], []
        try:
            for user in users:
                socket = connect(f"/ws/queues/{topic}/in-flight/", user)
                sockets.append(socket)
                assert (await socket.connect())[0]
                frames.append(await receive_until(socket, f'data-message="{message_id}"', 20))
            return frames
        finally:
            for socket in sockets:
                await socket.disconnect()

    return async_to_sync(scenario)()


def tail_frame(role: str, registered: Queue) -> str:
    """The live tail's row for a record written after it opened."""
    user = user_with(role)
    config = registered.config()

    async def scenario() -> str:
        socket = connect(f"/ws/clusters/local/topics/{registered.topic}/tail/", user)
        assert (await socket.connect())[0]
        try:
            await receive_until(socket, "tailing from", 20)
            await asyncio.to_thread(write, config, 1)
            return await receive_until(socket, "data-offset=", 20)
        finally:
            await socket.disconnect()

    return async_to_sync(scenario)()


def test_no_surface_shows_a_masked_secret_to_a_viewer_and_an_admin_sees_them(
    queue: QueueConfig, registered: Queue, tracker
) -> None:
    write(queue, 2)
    with QueueClient(queue) as worker:
        rejected, kept = sorted(poll_until(worker, 2), key=lambda m: m.id)
        worker.reject(rejected, "bad card")
        worker.flush()
        wait_for(lambda: read_all(queue, queue.dlq_topic), 20, "the letter")
        [letter] = read_all(queue, queue.dlq_topic)
        ids = {"rejected": rejected.id, "open": kept.id}

        admin = surfaces("admin", registered, ids, letter)  # no rules yet: all clear
        assert [name for name, text in admin.items() if not leaked(text)] == ["queue page"]
        set_rules(mask_operators=False)
        registered.refresh_from_db()

        viewer = surfaces("viewer", registered, ids, letter)
        frames = in_flight_frames(["viewer", "admin"], queue.topic, kept.id)
        viewer["in-flight live frame"] = frames[0]
        viewer["browser live tail"] = tail_frame("viewer", registered)
        found = {name: leaked(text) for name, text in viewer.items() if leaked(text)}
        assert found == {}
        assert "***" in viewer["message page (rejected)"] and "***" in viewer["api dlq"]

        admin = surfaces("admin", registered, ids, letter)
        assert CARD in admin["message page (rejected)"] and TOKEN in admin["api dlq"]
        assert PIN in admin["api in flight"] and CARD in admin["browser message (dlq, json)"]
        assert CARD in admin["api records"] and TOKEN in admin["api record (dlq)"]
        assert PIN in frames[1]  # the admin's socket did not join the viewers' feed
        assert CARD in tail_frame("admin", registered)

        operator = surfaces("operator", registered, ids, letter)
        assert CARD in operator["message page (in flight)"] and PIN in operator["api in flight"]
        set_rules(mask_operators=True)
        registered.refresh_from_db()
        operator = surfaces("operator", registered, ids, letter)
        # An admin's table has the operators' buttons: only the mask tells their feeds apart.
        operator["in-flight live frame"], clear = in_flight_frames(
            ["operator", "admin"], queue.topic, kept.id
        )
        assert {name: leaked(text) for name, text in operator.items() if leaked(text)} == {}
        assert PIN in clear
        worker.ack(kept)
        worker.flush()


def test_a_masked_audience_cannot_edit_what_it_sees_masked(
    queue: QueueConfig, registered: Queue, tracker
) -> None:
    write(queue, 1)
    [message], [letter] = reject_taken(queue, 1)
    set_rules(mask_operators=True)
    operator, topic = client_as("operator"), queue.topic
    where = f"{letter.partition()}/{letter.offset()}"
    refused = [
        operator.get(f"/queues/{topic}/produce", {"from": message.id}),
        operator.get(f"/queues/{topic}/dlq/{where}/edit"),
        operator.post(f"/queues/{topic}/dlq/{where}/edit", {"value": "x"}),
    ]
    for answer in refused:
        assert answer.status_code == 403
        assert b"would write the mask" in answer.content
    edit = {"value": "edited"}
    api = api_as("operator").post(
        f"/api/v1/queues/{topic}/dlq/{where}/redrive", edit, format="json"
    )
    assert api.status_code == 403 and "would write the mask" in api.json()["detail"]
    assert operator.get(f"/queues/{topic}/produce").status_code == 200  # a new message: fine
    browsed = operator.get(f"/clusters/local/topics/{queue.dlq_topic}/{where}").content.decode()
    assert "Redrive with edits" not in browsed
    dlq = operator.get(f"/queues/{topic}/dlq/", {"partition": letter.partition()}).content
    assert b"redrive with edits" not in dlq and b"redrive</button>" in dlq
    message_page = operator.get(f"/queues/{topic}/messages/{message.id}").content
    assert b"Reproduce with edits" not in message_page and b"data-masked" in message_page


def test_a_filter_cannot_find_what_the_mask_hides(
    queue: QueueConfig, registered: Queue, tracker
) -> None:
    write(queue, 1)
    [message], [letter] = reject_taken(queue, 1)
    set_rules(mask_operators=False)
    browse = f"/clusters/local/topics/{queue.topic}/browse"
    query = {"partition": 0, "start": "oldest", "contains": CARD}
    assert 'data-offset="0/0"' not in client_as("viewer").get(browse, query).content.decode()
    assert 'data-offset="0/0"' in client_as("admin").get(browse, query).content.decode()
    dlq = {"partition": letter.partition(), "contains": CARD}
    found = [
        len(api_as(role).get(f"/api/v1/queues/{queue.topic}/dlq/", dlq).json()["results"])
        for role in ("viewer", "admin")
    ]
    assert found == [0, 1]
    records = f"/api/v1/clusters/local/topics/{queue.topic}/records/"
    found = [
        len(api_as(role).get(records, query).json()["records"]) for role in ("viewer", "admin")
    ]
    assert found == [0, 1]
    page = client_as("viewer").get(f"/queues/{queue.topic}/dlq/", dlq).content.decode()
    assert message.id not in page
    # The nav's search matches keys as each person sees them.
    search = {"q": f"k0-{PIN}"}
    assert message.id not in client_as("viewer").get("/search/", search).content.decode()
    assert message.id in client_as("admin").get("/search/", search).content.decode()


def test_rules_are_checked_and_their_changes_audited(registered: Queue) -> None:
    admin, topic = api_as("admin"), registered.topic
    bad = {"mask_json_paths": "$.ok\n$[?", "mask_patterns": "(a+)+"}
    answer = admin.patch(f"/api/v1/queues/{topic}/", bad, format="json")
    assert answer.status_code == 400
    assert "$[?" in str(answer.json()["mask_json_paths"])
    set_rules(mask_operators=False)
    entry = AuditEntry.objects.filter(action="register queue").latest("pk")
    assert entry.after["mask_headers"] == "x-auth"
    registry = client_as("admin")
    form = registry.get(f"/registry/queue/{registered.pk}").context["form"]
    fields = {k: v for k, v in form.initial.items() if v is not None}
    fields |= {"cluster": registered.cluster.pk, "mask_patterns": "[unclosed"}
    page = registry.post(f"/registry/queue/{registered.pk}", fields)
    assert page.status_code == 400
    assert "[unclosed" in page.context["form"].errors["mask_patterns"][0]


def test_a_payload_not_utf8_is_hidden_whole_from_a_viewer(registered: Queue) -> None:
    set_rules(mask_operators=False)
    producer = Producer({"bootstrap.servers": registered.cluster.bootstrap})
    producer.produce(registered.topic, b"\xff\xfe" + CARD.encode(), partition=0)
    assert producer.flush(10) == 0
    viewer = client_as("viewer")
    url = f"/clusters/local/topics/{registered.topic}/0/0"
    for rendering in ("hex", "text"):
        assert leaked(viewer.get(url, {"as": rendering}).content.decode()) == []
    assert CARD in undumped(client_as("admin").get(url, {"as": "hex"}).content.decode())


def test_payloads_decoded_by_schema_are_masked_after_decoding(
    registered: Queue, queue: QueueConfig, tracker, framing, schema_registry
) -> None:
    """A real registry: a JSON Schema payload whose field a rule names, read
    through every page that decodes by schema and every browser rendering."""
    Cluster.objects.filter(pk=registered.cluster_id).update(schema_registry_url=schema_registry.url)
    api_as("admin").patch(
        f"/api/v1/queues/{queue.topic}/", {"mask_json_paths": "$.name"}, format="json"
    )
    producer = QueueProducer(queue)
    producer.send(framing.json(queue.topic, {"name": CARD, "qty": 3}), b"k", partition=0)
    producer.flush()
    [message], [letter] = reject_taken(queue, 1)
    where = [
        (queue.topic, 0, message.offset),
        (queue.dlq_topic, letter.partition(), letter.offset()),
    ]
    pages = [
        f"/queues/{queue.topic}/messages/{message.id}",
        f"/queues/{queue.topic}/dlq/?partition={letter.partition()}",
    ] + [
        f"/clusters/local/topics/{t}/{p}/{o}?as={rendering}"
        for t, p, o in where
        for rendering in ("schema", "json", "text", "hex")
    ]
    viewer, admin = client_as("viewer"), client_as("admin")
    for url in pages:
        shown = viewer.get(url).content.decode()
        assert leaked(shown) == [], url
    decoded = [admin.get(url).content.decode() for url in pages[:2]]
    assert all('data-schema="decoded"' in page and CARD in page for page in decoded)
    decoded_for_viewer = html.unescape(viewer.get(pages[0]).content.decode())
    assert '"qty": 3' in decoded_for_viewer and '"name": "***"' in decoded_for_viewer
    for topic, p, o in where:  # the API's renderings, as the browser's
        url = f"/api/v1/clusters/local/topics/{topic}/records/{p}/{o}"
        shown = {r["name"]: r for r in api_as("viewer").get(url).json()["renderings"]}
        assert leaked(json.dumps(shown)) == [] and shown["schema"]["error"] == ""
        assert '"***"' in shown["schema"]["text"] and "qty" in shown["schema"]["text"]
        assert CARD in api_as("admin").get(url).json()["renderings"][0]["text"]


def test_the_backoff_schedules_topic_holding_copies_is_masked_too(registered: Queue) -> None:
    set_rules(mask_operators=False)
    topic = names.schedules_topic(registered.topic)
    ensure_topics(registered.cluster.bootstrap, {topic: 1})
    producer = Producer({"bootstrap.servers": registered.cluster.bootstrap})
    producer.produce(topic, json.dumps({"card": CARD}).encode(), b"s-1", partition=0)
    assert producer.flush(10) == 0
    url = f"/clusters/local/topics/{topic}/0/0"
    assert leaked(client_as("viewer").get(url, {"as": "text"}).content.decode()) == []
    assert CARD in client_as("admin").get(url, {"as": "text"}).content.decode()


def test_rules_added_while_a_viewer_watches_mask_the_next_push(
    queue: QueueConfig, registered: Queue
) -> None:
    viewer = user_with("viewer")
    write(queue, 1)

    async def scenario() -> None:
        socket = connect(f"/ws/queues/{queue.topic}/in-flight/", viewer)
        assert (await socket.connect())[0]
        try:
            with QueueClient(queue) as worker:
                [message] = await asyncio.to_thread(poll_until, worker, 1)
                clear = await receive_until(socket, f'data-message="{message.id}"', 20)
                assert PIN in clear  # no rules yet
                await database_sync_to_async(set_rules)(False)
                masked = await receive_until(socket, "k0-***", 20)
                assert leaked(masked) == []
                await asyncio.to_thread(worker.ack, message)
                await asyncio.to_thread(worker.flush)
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()


def test_rules_added_while_a_tail_is_open_mask_its_next_rows(registered: Queue) -> None:
    viewer, config = user_with("viewer"), registered.config()

    async def scenario() -> None:
        socket = connect(f"/ws/clusters/local/topics/{registered.topic}/tail/", viewer)
        assert (await socket.connect())[0]
        try:
            await receive_until(socket, "tailing from", 20)
            await asyncio.to_thread(write, config, 1)
            assert CARD in await receive_until(socket, "data-offset=", 20)
            await database_sync_to_async(set_rules)(False)
            await asyncio.to_thread(write, config, 1)
            assert leaked(await receive_until(socket, "data-offset=", 20)) == []
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()


def test_rules_that_do_not_compile_hide_everything_from_a_masked_audience(
    queue: QueueConfig, registered: Queue
) -> None:
    """Saved around the checks (by hand in SQL): no page fails, none leaks."""
    write(queue, 1)
    Queue.objects.filter(pk=registered.pk).update(mask_patterns="(unclosed")
    url = f"/clusters/local/topics/{queue.topic}/0/0"
    for rendering in ("json", "text", "hex"):
        answer = client_as("viewer").get(url, {"as": rendering})
        assert answer.status_code == 200 and leaked(answer.content.decode()) == []
    assert CARD in client_as("admin").get(url, {"as": "text"}).content.decode()
