"""Schedule keys that are not UTF-8 (any producer may write one): addressed
by their key bytes in base64url, edited, cancelled and fired from the console
and the API like any other."""

from datetime import UTC, datetime, timedelta

import pytest
from confluent_kafka import Producer
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry, Cluster, ScheduleTopic
from kmqadmin.console.services.clusters import clients
from kmqadmin.scheduler import SchedulerConfig, wire
from kmqadmin.scheduler.schedule_refs import ENCODED, key_of, ref_of
from tests.console.conftest import client_as
from tests.process import wait_for
from tests.schedule_helpers import fired

pytestmark = pytest.mark.django_db

EDITED, CANCELLED, FIRED = b"\xff\xfe", b"\xff\xfd", b"\x93"


@pytest.mark.parametrize(
    ("key", "ref"),
    [
        (b"invoice-7", "invoice-7"),
        (b"a/b\n", "a/b\n"),
        (b"\xff\xfe", "~b64:__4="),
        (b"~b64:x", "~b64:fmI2NDp4"),  # text that reads as an address is encoded too
        (b"", "~b64:"),
    ],
)
def test_every_key_has_one_address_and_back(key: bytes, ref: str) -> None:
    assert (ref_of(key), key_of(ref)) == (ref, key)


@pytest.mark.parametrize("ref", ["~b64:!!", "~b64:_w", "~b64:__4", "\ud800"])
def test_an_address_of_no_key_is_refused(ref: str) -> None:
    with pytest.raises(ValueError):
        key_of(ref)


def _write_raw(config: SchedulerConfig, target: str, key: bytes) -> None:
    due = int((datetime.now(UTC) + timedelta(hours=1)).timestamp() * 1000)
    producer = Producer({"bootstrap.servers": config.bootstrap_servers})
    headers = wire.schedule_headers(due, target, b"k", [])
    producer.produce(config.topic, key=key, value=b"v", headers=headers)
    assert producer.flush(10) == 0


@pytest.mark.usefixtures("scheduler")
def test_undecodable_schedule_ids_are_edited_cancelled_and_fired(
    schedules: SchedulerConfig, target: str
) -> None:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=schedules.bootstrap_servers)
    ScheduleTopic.objects.create(cluster=cluster, topic=schedules.topic, group_id="view")
    for key in (EDITED, CANCELLED, FIRED):
        _write_raw(schedules, target, key)
    view = clients.upcoming(schedules)
    wait_for(lambda: view.refresh() or view.count() == 3, 20, "three live schedules")
    topic, console, api = schedules.topic, client_as("operator"), APIClient()
    api.force_authenticate(User.objects.get(username="operator"))

    edit_url = f"/schedules/{topic}/{ENCODED}__4=/edit"
    link = f'href="{edit_url}?cluster=local"'
    wait_for(lambda: link in console.get(f"/schedules/{topic}/").content.decode(), 20, link)
    listed = api.get(f"/api/v1/schedules/{topic}/").json()["results"]
    assert {s["ref"] for s in listed} == {ref_of(k) for k in (EDITED, CANCELLED, FIRED)}

    assert console.get(edit_url).status_code == 200
    form = {"at": "2998-01-01 00:00:00", "target_topic": target, "key": "k", "value": "new"}
    assert console.post(edit_url, form).status_code == 302
    wait_for(
        lambda: view.refresh() or view.get(EDITED).due_ms > view.get(CANCELLED).due_ms,
        20,
        "the edit under the same key",
    )
    cancel = console.post(f"/schedules/{topic}/{ref_of(CANCELLED)}/cancel")
    assert cancel.status_code == 200
    assert api.post(f"/api/v1/schedules/{topic}/{ref_of(FIRED)}/fire").status_code == 200
    [shot] = wait_for(lambda: fired(schedules, target), 30, "the fire-now")
    assert dict(shot.headers())[wire.FIRED_KEY] == FIRED
    wait_for(lambda: view.refresh() or view.count() == 1, 20, "only the edited one left")
    assert view.get(EDITED) is not None
    assert api.get(f"/api/v1/schedules/{topic}/{ENCODED}nope").status_code == 404
    targets = set(AuditEntry.objects.values_list("target", flat=True))
    assert {f"{topic}/{ref_of(k)}" for k in (EDITED, CANCELLED, FIRED)} <= targets
