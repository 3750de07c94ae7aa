"""Schedule targets limited per schedules topic: set in the registry, enforced
on every write from the console and shown on the schedules page."""

import pytest

from kmqadmin.console.models import ScheduleTopic
from kmqadmin.console.services.clusters import clients
from tests.console.conftest import client_as
from tests.process import wait_for

pytestmark = pytest.mark.django_db


def test_a_new_schedules_topic_proposes_the_registered_queues(registered, topic: str) -> None:
    admin = client_as("admin")
    form = admin.get("/registry/schedules/new").content.decode()
    assert f"\n{topic}</textarea>" in form
    fields = {
        "cluster": str(registered.cluster.pk),
        "topic": f"{topic}-s",
        "group_id": "s",
        "partitions": 1,
        "allowed_targets": f"{topic}, billing\nbilling",
    }
    bad = admin.post("/registry/schedules/new", fields | {"allowed_targets": "no/slashes"})
    assert bad.status_code == 400 and b"no/slashes: 1 or more of a-z" in bad.content
    assert admin.post("/registry/schedules/new", fields).status_code == 302
    assert ScheduleTopic.objects.get(topic=f"{topic}-s").allowed_targets == [topic, "billing"]


def test_the_console_refuses_a_target_outside_the_list_and_flags_older_ones(
    registered, topic: str
) -> None:
    schedules = ScheduleTopic.objects.create(
        cluster=registered.cluster, topic=f"{topic}-s", group_id="s"
    )
    schedules.config().ensure_topics(partitions=1)
    at = {"at": "2999-01-01 10:00:00", "value": "v"}
    operator = client_as("operator")
    page = f"/schedules/{schedules.topic}/"
    old = at | {"id": "old", "target_topic": "anywhere"}
    assert operator.post(f"{page}new", old).status_code == 302  # any topic, until a list is set
    schedules.allowed_targets = [topic]
    schedules.save()
    refused = operator.post(
        f"{page}new", at | {"id": "new", "target_topic": f"{topic}__undelivered"}
    )
    assert refused.status_code == 400 and b"may not fire into" in refused.content
    assert operator.post(f"{page}new", at | {"id": "new", "target_topic": topic}).status_code == 302
    listed = wait_for(
        lambda: (r := operator.get(page)).context["count"] == 2 and r, 20, "both listed"
    )
    assert listed.context["forbidden"] == 1
    assert listed.content.count(b"data-not-allowed") == 1
    fire = operator.post(f"{page}old/fire")
    assert fire.status_code == 400 and b"may not fire into anywhere" in fire.content
    assert clients.upcoming(schedules.config()).get(b"old").allowed is False
