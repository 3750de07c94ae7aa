"""What the SQS endpoint remembers between requests (keys, queues): kept for
REMEMBER_S, forgotten at once when this process saves what it came from,
and never an answer of "not found"."""

from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from kmqadmin.console.models import Cluster, Queue, SqsQueue
from kmqadmin.console.services import sqs_keys
from kmqadmin.sqs.auth import remembered as memory
from kmqadmin.sqs.registered import lookup

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_memory() -> None:
    memory.forget()


def lookups[T](find: Callable[[], T]) -> tuple[Callable[[], T], list[int]]:
    """``find``, counting its calls."""
    calls: list[int] = []

    def counted() -> T:
        calls.append(1)
        return find()

    return counted, calls


def test_an_answer_is_kept_and_not_found_is_asked_again() -> None:
    found, calls = lookups(lambda: "answer")
    assert memory.remembered("k", found) == memory.remembered("k", found) == "answer"
    assert len(calls) == 1
    missing, misses = lookups(lambda: None)
    assert memory.remembered("gone", missing) is memory.remembered("gone", missing) is None
    assert len(misses) == 2


def test_a_key_revoked_or_a_role_changed_in_this_process_applies_at_once() -> None:
    user = get_user_model().objects.create_user("svc")
    key_id, _ = sqs_keys.create(user)
    found, calls = lookups(lambda: sqs_keys.active(key_id))
    assert memory.remembered(("key", key_id), found) is not None
    user.groups.add(Group.objects.get(name="operator"))
    assert memory.remembered(("key", key_id), found) is not None
    assert len(calls) == 2  # the role change forgot it
    sqs_keys.revoke(key_id)
    assert memory.remembered(("key", key_id), found) is None


def test_a_queue_edited_here_is_read_afresh_and_one_edited_elsewhere_within_the_ttl() -> None:
    cluster = Cluster.objects.create(name="local", bootstrap_servers="127.0.0.1:1")
    queue = Queue.objects.create(cluster=cluster, topic="orders", group_id="orders-workers")
    params = {"QueueUrl": "http://h/sqs/000000000000/orders"}
    lookup(params)  # makes its SQS attributes: a save, which forgets
    assert lookup(params)[1].delay_seconds == 0
    # Another process's write: no signal here, so the remembered one is served...
    SqsQueue.objects.filter(queue=queue).update(delay_seconds=5)
    assert lookup(params)[1].delay_seconds == 0
    assert lookup(params, to_change=True)[1].delay_seconds == 5
    # ...until this process saves the queue (or REMEMBER_S passes).
    sqs = SqsQueue.objects.get(queue=queue)
    sqs.delay_seconds = 7
    sqs.save()
    assert lookup(params)[1].delay_seconds == 7
