"""Receiver: one queue's QueueClient in the web process, polled by a thread
of its own while ReceiveMessage requests wait, so that a long poll holds
no thread: a waiting request is an asyncio future, and a hundred of them
cost a hundred futures.

The client is a member of the queue's worker group like any worker, so the
web process consumes only the partitions the group gives it. It polls only
while requests wait, and closes after IDLE_S without any, giving its
partitions back to the group's other members. Messages polled for a
request that is gone meanwhile (it timed out, or its client hung up) are
released at once: redelivered, counting as a delivery, as SQS does with
a message received but never seen.
"""

import asyncio
import logging
import threading
from collections import deque
from dataclasses import dataclass, field

from kmqadmin.kmq import QueueClient, QueueConfig
from kmqadmin.kmq.message import Message

log = logging.getLogger(__name__)

IDLE_S = 30.0  # without a waiting request, the client is closed after this
POLL_S = 0.2  # one poll's wait: how soon a new request is noticed by a busy poller
MAX_POLL = 500


@dataclass(eq=False)
class Waiter:
    """A request waiting for up to ``wants`` messages."""

    wants: int
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future = field(init=False)

    def __post_init__(self) -> None:
        self.future = self.loop.create_future()


class Receiver:
    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._waiters: deque[Waiter] = deque()
        self._changed = threading.Condition()
        self._returned: list[Message] = []  # to release, by the receiver's thread
        self._client: QueueClient | None = None
        self._thread: threading.Thread | None = None

    async def receive(self, wants: int, wait_s: float) -> list[Message]:
        """Up to ``wants`` messages, as soon as any have come, or none after
        ``wait_s``. Messages it was given after it was cancelled go back."""
        waiter = Waiter(wants, asyncio.get_running_loop())
        with self._changed:
            self._waiters.append(waiter)
            self._start()
            self._changed.notify()
        try:
            return await asyncio.wait_for(asyncio.shield(waiter.future), max(wait_s, POLL_S * 2))
        except TimeoutError:
            return self._withdraw(waiter)
        except asyncio.CancelledError:
            self._withdraw(waiter, give_back=True)
            raise

    def _withdraw(self, waiter: Waiter, give_back: bool = False) -> list[Message]:
        """Out of the queue of waiters. What it was given meanwhile is
        returned, or, with ``give_back``, released; what is still on its
        way to it is released when it comes (_resolve)."""
        with self._changed:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
                return []
        if not waiter.future.done():
            waiter.future.cancel()
            return []
        given = waiter.future.result()
        if give_back:
            self.release(given)
            return []
        return given

    def release(self, messages: list[Message]) -> None:
        """Redelivered now: done by the receiver's thread, which owns the client."""
        with self._changed:
            self._returned.extend(messages)
            self._changed.notify()

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._run, name=f"sqs-receiver {self.config.topic}", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        try:
            while self._wait_for_waiters():
                self._serve()
        except Exception:
            log.exception(
                "the SQS receiver of %s failed; its next request starts another", self.config.topic
            )
        finally:
            self._close()

    def _wait_for_waiters(self) -> bool:
        """False once idle for IDLE_S: the thread ends (a request starts another)."""
        with self._changed:
            busy = lambda: self._waiters or self._returned  # noqa: E731
            if not busy() and not self._changed.wait_for(busy, IDLE_S):
                self._thread = None
                return False
            return True

    def _serve(self) -> None:
        client = self._client = self._client or QueueClient(self.config)
        with self._changed:
            returned, self._returned = self._returned, []
            wanted = min(sum(w.wants for w in self._waiters), MAX_POLL)
        if returned:
            client.release_all(returned)
        messages = client.poll(wanted, POLL_S) if wanted else []
        while messages:
            with self._changed:
                if not self._waiters:
                    break
                waiter = self._waiters.popleft()
            given, messages = messages[: waiter.wants], messages[waiter.wants :]
            waiter.loop.call_soon_threadsafe(_resolve, waiter.future, given, self)
        if messages:
            client.release_all(messages)  # their requests left while they were polled
        if not self._waiters:
            # Settled before the thread waits: a kill -9 from here on leaves
            # what was handed out to the tracker alone, not to be read again.
            client.flush()

    def _close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:
                log.exception("closing the SQS receiver of %s", self.config.topic)


def _resolve(future: asyncio.Future, given: list[Message], receiver: Receiver) -> None:
    """On the request's event loop: hand over, or give back to a request gone."""
    if future.cancelled():
        receiver.release(given)
    else:
        future.set_result(given)


_receivers: dict[str, Receiver] = {}
_lock = threading.Lock()


def receiver(config: QueueConfig) -> Receiver:
    """The process's receiver of ``config``'s queue (an edited queue gets a
    new one; the old one closes when idle)."""
    key = repr(config)
    with _lock:
        found = _receivers.get(key)
        if found is None:
            found = _receivers[key] = Receiver(config)
    return found
