"""What every SQS request looks up (the key that signed it, with its user
and role; the queue it names) remembered for REMEMBER_S: those queries
were half of a request's time, and a service sends hundreds a second.

A save or delete of what is remembered (a key revoked, a user's roles or
a queue edited, through SQS or the console this process serves) forgets
everything at once. A change made by another process applies here within
REMEMBER_S, as changes to IAM keys and to SQS queues themselves take a
while to propagate. What is not found is not remembered: a queue created
a moment ago elsewhere is found at once.
"""

import threading
from collections.abc import Callable, Hashable

from cachetools import TTLCache
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models.signals import m2m_changed, post_delete, post_save

from kmqadmin.console.models import Cluster, Queue, SqsAccessKey, SqsQueue

REMEMBER_S = 1.0

_found: TTLCache = TTLCache(maxsize=4096, ttl=REMEMBER_S)
_lock = threading.Lock()
_generation = 0  # forget() moves it: a lookup begun before does not store its answer


def remembered[T](key: Hashable, find: Callable[[], T | None]) -> T | None:
    """``find()``'s answer, from memory if it was found in the last
    REMEMBER_S; None (not found) is asked again next time."""
    with _lock:
        if (known := _found.get(key)) is not None:
            return known
        generation = _generation
    answer = find()
    if answer is not None:
        with _lock:
            if generation == _generation:
                _found[key] = answer
    return answer


def forget(**_: object) -> None:
    global _generation
    with _lock:
        _found.clear()
        _generation += 1


for _model in (SqsAccessKey, get_user_model(), Group, Cluster, Queue, SqsQueue):
    post_save.connect(forget, sender=_model, dispatch_uid=f"sqs-remembered-{_model.__name__}")
    post_delete.connect(forget, sender=_model, dispatch_uid=f"sqs-remembered-d-{_model.__name__}")
m2m_changed.connect(forget, sender=get_user_model().groups.through, dispatch_uid="sqs-remembered-g")
