"""Blocking work of the SQS endpoint (the database, Kafka) off its event
loop, so a waiting long poll never waits behind it."""

import asyncio
import contextvars
import functools
from collections.abc import Callable

from django.db import close_old_connections


async def in_thread[**P, R](function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a blocking call (database, Kafka) in a thread of the loop's pool,
    in the caller's context (the audit's actor is a context variable). The
    thread's database connection is kept for the next call unless it is
    broken or past its age: outside Django's request handling nothing else
    would look. (asgiref's sync_to_async does this too, with machinery
    this endpoint does not need on every request.)"""

    def run() -> R:
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    call = functools.partial(contextvars.copy_context().run, run)
    return await asyncio.get_running_loop().run_in_executor(None, call)
