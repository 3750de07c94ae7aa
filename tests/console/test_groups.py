"""The groups pages on the real broker: a registered cluster's consumer
groups (a real confluent-kafka consumer) and share groups (a real
ShareConsumer), a group's members, offsets and lag, and the admin's reset:
a preview that moves nothing, then the apply of exactly what it showed."""

import json
import time
from urllib.parse import quote

import pytest
from confluent_kafka.admin import AdminClient
from django.test import Client

from kmqadmin.console.forms.reset import ConfirmResetForm
from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.admin.consumer_groups import ConsumerGroupAdmin
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.console.conftest import client_as
from tests.group_helpers import GroupMember, consumed_group, produce
from tests.process import wait_for
from tests.share_helpers import Sharer, read_from_earliest

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster(kafka: EmbeddedBroker) -> Cluster:
    return Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)


@pytest.fixture
def group(kafka: EmbeddedBroker, cluster: Cluster, topic: str) -> str:
    """A consumer group with offsets 4, 4 committed on ``topic``'s two
    partitions, two records an hour old and two new on each."""
    ensure_topics(kafka.bootstrap_servers, {topic: 2})
    return consumed_group(kafka.bootstrap_servers, topic, f"{topic}-readers")


def positions(kafka: EmbeddedBroker, group: str) -> dict:
    return ConsumerGroupAdmin(kafka.bootstrap_servers).positions(group)


def page(group: str, kind: str = "consumer") -> str:
    return f"/clusters/local/groups/{kind}/{quote(group)}/"


def preview(client: Client, group: str, kind: str = "consumer", **form):
    return client.post(page(group, kind) + "reset", form)


def confirm(client: Client, group: str, previewed, kind: str = "consumer"):
    """Posts back the preview's own confirmation form, as its button does."""
    form = previewed.context["confirm"]
    fields = {f.html_name: f.value() for f in form if f.value() is not None}
    return client.post(page(group, kind) + "reset", fields)


def test_the_list_shows_consumer_and_share_groups_with_their_queue(
    kafka: EmbeddedBroker, cluster: Cluster, group: str, topic: str
) -> None:
    share_group = f"{topic}-share"
    read_from_earliest(kafka.bootstrap_servers, share_group)
    Queue.objects.create(cluster=cluster, topic=topic, group_id=share_group, backend="share")
    with Sharer(kafka.bootstrap_servers, share_group, topic, client_id="sharer") as sharer:
        sharer.accept(8)
    viewer = client_as("viewer")
    assert viewer.get("/groups/").url == "/clusters/local/groups/"  # one cluster: straight there
    html = viewer.get("/clusters/local/groups/").content.decode()
    consumer_rows = html.split('id="consumer-groups"')[1].split('id="share-groups"')[0]
    share_rows = html.split('id="share-groups"')[1]
    assert f'data-group="{group}"' in consumer_rows and f'data-group="{share_group}"' in share_rows
    assert share_group not in consumer_rows and group not in share_rows  # each kind its own
    assert f'href="{page(share_group, "share")}"' in share_rows
    assert f'href="/queues/{topic}/?cluster=local"' in share_rows  # its registered queue
    assert 'href="/groups/"' in html  # the nav link
    share = viewer.get(page(share_group, "share")).content.decode()
    assert f'queue <a href="/queues/{topic}/?cluster=local">{topic}</a>' in share
    assert f'data-offsets="{topic}:0"' in share and "Start offset" in share


def test_a_group_page_shows_members_offsets_lag_and_totals(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    produce(kafka.bootstrap_servers, topic, 3)  # lag 3 on each partition
    viewer = client_as("viewer")
    with GroupMember(kafka.bootstrap_servers, group, topic) as member:
        member.poll()
        shown = wait_for(
            lambda: b"data-member" in (got := viewer.get(page(group))).content and got,
            30,
            "the member on the page",
        )
        detail = shown.context["shown"]
    html = shown.content.decode()
    (joined,) = detail.group.members
    assert joined.client_id == "reader-1" and joined.assignment == ((topic, 0), (topic, 1))
    assert "reader-1" in html and f"{topic}:0, {topic}:1" in html
    assert [(p.offset, p.log_start, p.end, p.lag) for p in detail.partitions] == [(4, 0, 7, 3)] * 2
    cells = "".join(f"<td>{v}</td>" for v in (topic, 1, 4, 0, 7, 3))
    assert f'<tr data-offsets="{topic}:1">{cells}</tr>' in html
    assert "<th data-total-lag>6</th>" in html
    assert "Reset offsets" not in html  # admins only


def test_unknown_groups_clusters_and_kinds_are_404(cluster: Cluster) -> None:
    viewer, admin = client_as("viewer"), client_as("admin")
    assert viewer.get(page("nobody")).status_code == 404
    assert viewer.get(page("nobody", "share")).status_code == 404
    assert viewer.get("/clusters/elsewhere/groups/").status_code == 404
    assert viewer.get("/clusters/local/groups/streams/g/").status_code == 404
    refused = preview(admin, "nobody", to="earliest")
    assert refused.status_code == 404 and b"no consumer group nobody" in refused.content


def test_the_reset_is_for_admins(group: str) -> None:
    for role in ("viewer", "operator"):
        assert preview(client_as(role), group, to="earliest").status_code == 403


def test_each_mode_previews_without_moving_then_applies_what_it_showed(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    admin = client_as("admin")
    assert "Reset offsets" in admin.get(page(group)).content.decode()
    half_hour_ago = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 1800))
    cases = [
        ({"to": "earliest"}, {(topic, 0): 0, (topic, 1): 0}),
        ({"to": "time", "at": half_hour_ago}, {(topic, 0): 2, (topic, 1): 2}),
        ({"to": "offset", "offset": "1"}, {(topic, 0): 1, (topic, 1): 1}),
        ({"to": "offset", "offset": "3", "topic": topic, "partition": "0"}, {(topic, 0): 3}),
        ({"to": "latest"}, {(topic, 0): 4, (topic, 1): 4}),
    ]
    for form, expected in cases:
        before = positions(kafka, group)
        shown = preview(admin, group, **form)
        assert shown.status_code == 200, shown.content
        moves = {m.partition: (m.current, m.new) for m in shown.context["plan"].moves}
        assert moves == {p: (before[p], new) for p, new in expected.items()}, form
        html = shown.content.decode()
        row = f'<tr data-move="{topic}:0"><td>{topic}</td><td>0</td><td>{before[topic, 0]}</td>'
        assert row in html
        assert positions(kafka, group) == before  # the dry run moved nothing
        done = confirm(admin, group, shown)
        assert done.status_code == 200 and b"reset " in done.content
        assert positions(kafka, group) == before | expected, form


def test_the_confirmation_applies_the_previewed_offsets_not_a_new_latest(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    admin = client_as("admin")
    assert confirm(admin, group, preview(admin, group, to="earliest")).status_code == 200
    shown = preview(admin, group, to="latest")
    produce(kafka.bootstrap_servers, topic, 5)  # the log moves on after the preview
    assert confirm(admin, group, shown).status_code == 200
    assert positions(kafka, group) == {(topic, 0): 4, (topic, 1): 4}
    entry = AuditEntry.objects.filter(action="reset group offsets").latest("pk")
    assert entry.status == "done" and entry.user.username == "admin"
    assert entry.target == f"consumer group {group} on cluster local"
    assert entry.before == {
        "to": {"mode": "latest"},
        "offsets": {f"{topic}:0": 0, f"{topic}:1": 0},
    }
    assert entry.after == {
        "to": {"mode": "latest"},
        "offsets": {f"{topic}:0": 4, f"{topic}:1": 4},
        "errors": {},
    }
    audit_page = admin.get("/audit/").content.decode()
    assert "reset group offsets" in audit_page and group in audit_page


def test_a_group_with_members_is_refused_409_and_nothing_moves(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    admin = client_as("admin")
    shown = preview(admin, group, to="earliest")
    with GroupMember(kafka.bootstrap_servers, group, topic) as member:
        member.poll()
        wait_for(lambda: b"data-member" in admin.get(page(group)).content, 30, "the member to join")
        refused = preview(admin, group, to="earliest")
        assert refused.status_code == 409 and b"is not empty: 1 consumer(s)" in refused.content
        late = confirm(admin, group, shown)  # previewed before the member joined
        assert late.status_code == 409 and b"is not empty" in late.content
    assert positions(kafka, group) == {(topic, 0): 4, (topic, 1): 4}
    (entry,) = AuditEntry.objects.filter(action="reset group offsets")
    assert entry.status == "failed" and "GroupNotEmpty" in entry.error


@pytest.mark.parametrize(
    ("form", "reason"),
    [
        ({"to": "time", "at": "yesterday-ish"}, b"Enter a valid date/time"),
        ({"to": "time"}, b"resetting to a time needs the time"),
        ({"to": "offset"}, b"resetting to an offset needs the offset"),
        ({"to": "sometime"}, b"Select a valid choice"),
        ({"to": "offset", "offset": "9"}, b"offset 9 is outside its log [0, 4]"),
        ({"to": "earliest", "partition": "0"}, b"a partition needs its topic"),
        ({"to": "earliest", "topic": "bad topic!"}, b"topic: "),
        ({"to": "earliest", "offsets": "{not json"}, b"offsets: "),
        ({"to": "earliest", "offsets": '{"t:x": 1}'}, b"is not topic:partition"),
        ({"to": "earliest", "offsets": "{}"}, b"offsets: "),
    ],
)
def test_bad_input_is_400_with_its_reason(
    kafka: EmbeddedBroker, group: str, topic: str, form: dict, reason: bytes
) -> None:
    answer = preview(client_as("admin"), group, **form)
    assert answer.status_code == 400 and reason in answer.content, answer.content
    assert positions(kafka, group) == {(topic, 0): 4, (topic, 1): 4}


def test_a_mistyped_topic_is_400_and_not_created(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    """Asking about a topic must not make it (librdkafka's admin asks the
    broker to, and the embedded broker, as Kafka's default, would)."""
    mistyped, admin = f"{topic}-typo", client_as("admin")
    answer = preview(admin, group, to="earliest", topic=mistyped)
    assert answer.status_code == 400 and f"topic {mistyped}".encode() in answer.content
    offsets = json.dumps({f"{mistyped}:0": 0})
    assert preview(admin, group, to="earliest", offsets=offsets).status_code == 400
    metadata = AdminClient({"bootstrap.servers": kafka.bootstrap_servers}).list_topics(timeout=5)
    assert mistyped not in metadata.topics


def test_a_confirmed_offset_beyond_the_log_or_partition_is_400(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    admin = client_as("admin")
    beyond = json.dumps({f"{topic}:0": 99})
    answer = preview(admin, group, to="earliest", offsets=beyond)
    assert answer.status_code == 400 and b"offset 99 is outside its log" in answer.content
    missing = json.dumps({f"{topic}:7": 0})
    answer = preview(admin, group, to="earliest", offsets=missing)
    assert answer.status_code == 400 and f"no such partitions: {topic}:7".encode() in answer.content
    assert positions(kafka, group) == {(topic, 0): 4, (topic, 1): 4}


def test_a_share_group_is_reset_from_its_page(
    kafka: EmbeddedBroker, cluster: Cluster, topic: str
) -> None:
    ensure_topics(kafka.bootstrap_servers, {topic: 2})
    share_group = f"{topic}-share"
    read_from_earliest(kafka.bootstrap_servers, share_group)
    produce(kafka.bootstrap_servers, topic, 2)
    admin = client_as("admin")
    with Sharer(kafka.bootstrap_servers, share_group, topic, client_id="sharer") as sharer:
        sharer.accept(4)
        refused = preview(admin, share_group, "share", to="earliest")
        assert refused.status_code == 409 and b"is not empty" in refused.content
    wait_for(
        lambda: b"data-member" not in admin.get(page(share_group, "share")).content,
        30,
        "the consumer to leave",
    )
    shown = preview(admin, share_group, "share", to="earliest")
    assert [(m.partition, m.new) for m in shown.context["plan"].moves] == [
        ((topic, 0), 0),
        ((topic, 1), 0),
    ]
    assert confirm(admin, share_group, shown, "share").status_code == 200
    detail = admin.get(page(share_group, "share")).context["shown"]
    assert [(p.offset, p.lag) for p in detail.partitions] == [(0, 2), (0, 2)]
    with Sharer(kafka.bootstrap_servers, share_group, topic, client_id="again") as sharer:
        assert len(sharer.accept(4)) == 4  # delivered again


@pytest.mark.parametrize("odd", ["\x00", "é漢 ?#", "a" * 300, "%2F", "g/reset"])
def test_any_group_id_is_an_answer_not_a_500(cluster: Cluster, odd: str) -> None:
    """Ids come from whoever names a group: any character must resolve."""
    viewer = client_as("viewer")
    for kind in ("consumer", "share"):
        answer = viewer.get(page(odd, kind))
        assert answer.status_code == 404, answer.content
    refused = preview(client_as("admin"), odd, "share", to="earliest")
    assert refused.status_code == 404


def test_a_saved_cluster_gets_new_group_admins(cluster: Cluster) -> None:
    """Its admins are kept per cluster; an edit (a new password behind the
    same reference, say) must not keep the old connection."""
    kept = clients.group_admin(cluster, "share")
    assert clients.group_admin(cluster, "share") is kept
    cluster.save()
    assert clients.group_admin(cluster, "share") is not kept


def test_a_confirmed_reset_whose_offsets_nest_past_the_stack_is_refused() -> None:
    """A forged confirm form raised RecursionError: a 500 instead of the reason."""
    form = ConfirmResetForm({"to": "earliest", "offsets": "[" * 100_000})
    assert not form.is_valid()
    assert "offsets: JSON nested too deeply" in str(form.errors)
