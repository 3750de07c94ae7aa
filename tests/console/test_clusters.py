"""The same topic registered on two clusters (both the embedded broker here):
a bare topic is ambiguous (300 naming the clusters, never one picked
silently), ``?cluster=`` chooses, and the console's links carry it."""

import pytest
from asgiref.sync import async_to_sync
from rest_framework.test import APIClient

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.console.conftest import client_as
from tests.console.test_live import connect, receive_until
from tests.users import user_with

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def twice(kafka: EmbeddedBroker, topic: str) -> str:
    for name in ("east", "west"):
        cluster = Cluster.objects.create(name=name, bootstrap_servers=kafka.bootstrap_servers)
        Queue.objects.create(cluster=cluster, topic=topic, group_id=f"{topic}-{name}")
        ScheduleTopic.objects.create(cluster=cluster, topic=topic, group_id=f"{topic}-s-{name}")
    Queue.objects.first().config().ensure_topics(partitions=1)
    return topic


def test_a_bare_topic_on_two_clusters_asks_which_and_a_named_cluster_answers(twice: str) -> None:
    console = client_as("operator")
    for page in (f"/queues/{twice}/", f"/queues/{twice}/dlq/", f"/schedules/{twice}/"):
        choose = console.get(page)
        assert choose.status_code == 300, page
        assert f'href="{page}?cluster=east"'.encode() in choose.content
        assert f'href="{page}?cluster=west"'.encode() in choose.content
        assert console.get(page, {"cluster": "west"}).status_code == 200, page
        assert console.get(page, {"cluster": "north"}).status_code == 404, page
    shown = console.get(f"/queues/{twice}/", {"cluster": "west"}).content.decode()
    assert f'ws-connect="/ws/queues/{twice}/in-flight/?cluster=west"' in shown
    assert f'href="/queues/{twice}/dlq/?cluster=west"' in shown
    home = console.get("/").content.decode()
    for name in ("east", "west"):
        assert f'href="/queues/{twice}/?cluster={name}"' in home
        assert f'href="/schedules/{twice}/?cluster={name}"' in home


def test_the_api_answers_300_with_the_clusters_until_one_is_named(twice: str) -> None:
    api = APIClient()
    api.force_authenticate(user_with("operator"))
    for url in (f"/api/v1/queues/{twice}/stats", f"/api/v1/schedules/{twice}/"):
        choose = api.get(url)
        assert choose.status_code == 300, url
        assert choose.json()["clusters"] == ["east", "west"]
        assert api.get(url, {"cluster": "east"}).status_code == 200, url
        assert api.get(url, {"cluster": "north"}).status_code == 404, url


def test_the_live_view_of_an_ambiguous_topic_needs_its_cluster(twice: str) -> None:
    viewer = user_with("viewer")

    async def scenario() -> None:
        bare = connect(f"/ws/queues/{twice}/in-flight/", viewer)
        assert not (await bare.connect())[0]
        named = connect(f"/ws/queues/{twice}/in-flight/?cluster=east", viewer)
        assert (await named.connect())[0]
        try:
            await receive_until(named, "Nothing in flight", 20)
        finally:
            await named.disconnect()

    async_to_sync(scenario)()
