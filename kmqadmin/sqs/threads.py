"""Blocking work of the SQS endpoint (the database, Kafka) off its event
loop, so a waiting long poll never waits behind it."""

from collections.abc import Callable

from asgiref.sync import sync_to_async
from django.db import close_old_connections


async def in_thread[**P, R](function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a blocking call (database, Kafka) off the event loop, in a thread
    of a pool, and close its database connection after if it is done with:
    outside Django's request handling nothing else would."""

    def run() -> R:
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return await sync_to_async(run, thread_sensitive=False)()
