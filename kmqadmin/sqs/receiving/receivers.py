"""Receiver: one queue's QueueClient in the web process, polled by a thread
of its own while ReceiveMessage requests wait, so that a long poll holds
no thread: a waiting request is an asyncio future, and a hundred of them
cost a hundred futures.

The client is a member of the queue's worker group like any worker, so the
web process consumes only the partitions the group gives it. It polls only
while requests wait, and closes after IDLE_S without any, giving its
partitions back to the group's other members (a member that does not poll
holds up a rebalance of its group, at most that long). A new client joins
its group before it gets a record, so a short poll (WaitTimeSeconds 0, SQS's
default) on one waits up to WARMING_S for what is already on the queue,
until its first poll that finds any (the group joined).
Each poll is settled (starts on the broker, offsets committed) before its
messages are handed out: two broker round trips. While requests keep
coming (more than one in STOCK_WINDOW_S), a compact-format queue's receiver
settles more than they wait for, as much as they asked for in that window
(MAX_STOCK at most), and a request finds it ready: it takes it on its
event loop, with no round trip and no wait for the receiver's thread
(bench/sqs.py: ReceiveMessage p50 from 15-18 ms to 9 ms, p99 from 29-41
to 19-21). What no request takes within FRESH_S goes back as unseen
(QueueClient.return_unseen): redelivered with its delivery count kept, as
SQS counts only the receives it returns; so does what was polled for a
request that timed out meanwhile, or whose client hung up. A kmq-format
queue cannot say "unseen" (kmq's tracker would read it as an ack): it
stocks nothing, and one polled for a request gone waits for the next
request up to half its visibility timeout (HOLD_S at most), since releasing
it would count a receive no client saw, and enough of those would
dead-letter a message no worker ran; it is then handed out with its
deadline moved to a whole visibility timeout from then. On a share queue,
whose lock the client cannot renew, it waits READY_S. One still not taken
then is released: redelivered, counting as a delivery.

On a share queue the client is a share group member, and only it can
acknowledge what it acquired: the receiver keeps what it handed out
(share_holds.py), settles it on its thread for any request of this process
(settle()), and stays a member while it holds any.
"""

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from kmqadmin.kafka.client.clock import to_s
from kmqadmin.kmq import QueueClient, QueueConfig
from kmqadmin.kmq.message import Message
from kmqadmin.sqs.receiving.receipts import Receipt
from kmqadmin.sqs.receiving.share_holds import Settling, ShareHolds, refusals

log = logging.getLogger(__name__)

# Without a waiting request the client is closed after this: it polls only for
# requests, and a member that does not poll holds up its group's rebalances.
IDLE_S = 5.0
POLL_S = 0.2  # one poll's wait: how soon a new request is noticed by a busy poller
MAX_POLL = 500
SETTLE_S = 35.0  # past a QueueClient.flush's own 30 s
READY_S = 1.0  # a share message polled for a request that left waits this long for another
HOLD_S = 20.0  # a kmq-format one: half its visibility timeout, at most this (a long poll's length)
FRESH_S = 0.5  # handed out later than this after its start, its deadline is moved
STOCK_WINDOW_S = 0.05  # the stock is what requests asked for in this long
MAX_STOCK = 100
# A client just made joins its group before it gets a record: a short poll on
# it waits this long at most for what is already on the queue, so repeated
# short polls of a quiet queue (each finding its client closed) get it too.
WARMING_S = 5.0
WARM = float("-inf")  # _client_since of a client that has polled messages


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
        self._returned: list[Message] = []  # to give back, by the receiver's thread
        self._settling: list[Settling] = []  # for the receiver's thread
        # Polled and settled, with when, for the next requests (under _changed).
        self._ready: list[tuple[float, Message]] = []
        self._stocks = config.backend != "share" and config.marker_format == "compact"
        self._asked: deque[tuple[float, int]] = deque()  # (when, wants): the stock's measure
        self._taken = False  # a request took from the stock: the thread fills it again
        self._held = ShareHolds(config.message_timeout_ms)  # share: handed out
        self._thread: threading.Thread | None = None
        self._client_since: float | None = None  # when the thread's client was made

    async def receive(self, wants: int, wait_s: float) -> list[Message]:
        """Up to ``wants`` messages, as soon as any have come, or none after
        ``wait_s``. Messages given to it after it was cancelled go back."""
        with self._changed:
            if self._stocks:
                self._asked.append((time.monotonic(), wants))
            if taken := self._take_fresh(wants):
                return taken
            waiter = Waiter(wants, asyncio.get_running_loop())
            warming = self._warming_s()
            self._waiters.append(waiter)
            self._start()
            self._changed.notify()
        try:
            wait = max(wait_s, POLL_S * 2, warming)
            return await asyncio.wait_for(asyncio.shield(waiter.future), wait)
        except TimeoutError:
            if self._withdrawn(waiter):
                return []
            # Messages were assigned to it as its time ran out: they are being
            # settled (a broker round trip) and are its own.
            return await asyncio.wait_for(waiter.future, SETTLE_S)
        except asyncio.CancelledError:
            if not self._withdrawn(waiter):
                waiter.future.cancel()  # what it was assigned goes back (_resolve)
                if not waiter.future.cancelled():
                    self.release(waiter.future.result())
            raise

    def _take_fresh(self, wants: int) -> list[Message]:
        """Up to ``wants`` ready messages started less than FRESH_S ago,
        whose deadline needs no moving (the caller holds _changed). None on a
        share queue: its thread keeps what it hands out."""
        if self.config.backend == "share" or not self._ready:
            return []
        fresh = time.monotonic() - FRESH_S
        count = 0
        while count < min(wants, len(self._ready)) and self._ready[count][0] >= fresh:
            count += 1
        taken = [m for _, m in self._ready[:count]]
        if taken:
            del self._ready[:count]
            self._taken = True
            self._start()
            self._changed.notify()
        return taken

    def _stock(self) -> int:
        """What requests asked for in the last STOCK_WINDOW_S, if more than
        one did (the caller holds _changed): a lone client that comes back
        slower than that (a worker busy with what it got) would find its
        stock given back, each message written twice."""
        if not self._stocks:
            return 0
        since = time.monotonic() - STOCK_WINDOW_S
        while self._asked and self._asked[0][0] < since:
            self._asked.popleft()
        if len(self._asked) < 2:
            return 0
        return min(MAX_STOCK, sum(wants for _, wants in self._asked))

    def _warming_s(self) -> float:
        """How much longer the client may still be joining its group."""
        if self._client_since is None:
            return WARMING_S
        return max(0.0, self._client_since + WARMING_S - time.monotonic())

    def _withdrawn(self, waiter: Waiter) -> bool:
        """Taken out of the queue of waiters: True if no messages were
        assigned to it yet, so none ever will be."""
        with self._changed:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
                return True
        return False

    def release(self, messages: list[Message]) -> None:
        """Messages no client got (its request failed or hung up) go back
        (_give_back), by the receiver's thread, which owns the client."""
        with self._changed:
            self._returned.extend(messages)
            self._start()
            self._changed.notify()

    def settle(
        self, kind: str, receipts: Sequence[Receipt], ms: int = 0, reason: str = ""
    ) -> list[str | None]:
        """Share deliveries this process handed out, acknowledged by the
        client that acquired them; a reason per receipt it could not settle.
        Blocks (a pool thread's call) until the broker has answered."""
        job = Settling(kind, receipts, ms, reason)
        with self._changed:
            self._settling.append(job)
            self._start()
            self._changed.notify()
        return job.done.result(SETTLE_S)

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._run, name=f"sqs-receiver {self.config.topic}", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        """The client is this thread's alone: a thread started while this
        one closes up makes its own."""
        client: QueueClient | None = None
        try:
            while self._wait_for_waiters():
                if client is None:
                    client = QueueClient(self.config)
                    self._client_since = time.monotonic()
                self._serve(client)
        except Exception as exc:
            topic = self.config.topic
            log.exception("the SQS receiver of %s failed; a next request starts another", topic)
            with self._changed:
                settling, self._settling = self._settling, []
                self._client_since = None
            for job in settling:
                job.done.set_exception(exc)
        finally:
            if client is not None:
                _close(client)

    def _wait_for_waiters(self) -> bool:
        """False once idle for IDLE_S: the thread ends (a request starts
        another). With messages ready and no one to take them, it comes back
        within _hold_s() to hand them out or give them back."""
        with self._changed:
            busy = lambda: self._waiters or self._returned or self._settling or self._taken  # noqa: E731
            if busy() or self._changed.wait_for(busy, self._hold_s() if self._ready else IDLE_S):
                return True
            if self._ready or self._held.any():
                return True
            self._thread, self._client_since = None, None
            return False

    def _serve(self, client: QueueClient) -> None:
        self._hand_out(client)  # what is ready first: a poll is two round trips
        with self._changed:
            returned, self._returned = self._returned, []
            settling, self._settling = self._settling, []
            waiting = sum(w.wants for w in self._waiters)
            wanted = waiting + self._stock() - len(self._ready)
            self._taken = False
        for job in settling:
            try:
                self._held.settle(client, job)
            except Exception as exc:  # a broker away, say: the request says so
                job.done.set_exception(exc)
        if returned:
            self._held.drop(returned)
            self._give_back(client, returned)
        if wanted > 0:
            refused = client.refused_commits
            # Only for the stock: no waiting, the queue may be empty.
            polled = client.poll(min(wanted, MAX_POLL), POLL_S if waiting else 0)
            if polled:
                self._client_since = WARM  # its group joined: short polls are short again
                # Their starts on the broker and offsets committed before any is
                # handed out: a marker its request writes next (an extend, a
                # release) lands after its start, and a kill -9 from here on
                # leaves them to the tracker, never to be read again.
                client.flush()
                settled = _committed(client, polled, refused)
                with self._changed:
                    self._ready.extend((time.monotonic(), m) for m in settled)
        self._hand_out(client)

    def _hand_out(self, client: QueueClient) -> None:
        """The ready messages to the waiters, oldest first. One no waiter
        takes within _hold_s() goes back: its visibility timeout is running."""
        while True:
            with self._changed:
                if not self._waiters or not self._ready:
                    break
                waiter = self._waiters.popleft()
                taken = self._ready[: waiter.wants]
                del self._ready[: waiter.wants]
            given = [m for _, m in taken]
            if self.config.backend == "share":
                self._held.hold(given)
            else:
                self._renew(client, taken)
            waiter.loop.call_soon_threadsafe(_resolve, waiter.future, given, self)
        stale = time.monotonic() - self._hold_s()
        with self._changed:
            old = [m for at, m in self._ready if at < stale]
            if old:
                self._ready = [(at, m) for at, m in self._ready if at >= stale]
        if old:
            self._give_back(client, old)

    def _give_back(self, client: QueueClient, messages: list[Message]) -> None:
        """Handed to no one: unseen where the queue can say so, else released."""
        if self._stocks:
            client.return_unseen(messages)
        else:
            refusals(client.release_all, messages)

    def _hold_s(self) -> float:
        """How long a ready message waits for a request before it goes back."""
        if self.config.backend == "share":
            return READY_S
        if self._stocks:
            return FRESH_S
        return min(HOLD_S, to_s(self.config.message_timeout_ms) / 2)

    def _renew(self, client: QueueClient, taken: list[tuple[float, Message]]) -> None:
        """A whole visibility timeout from now for those that waited for
        their request: their deadline counted from their start, and the
        request's client is owed the queue's full timeout. On the broker
        before they are handed out, so a delete sent right away follows it."""
        late = time.monotonic() - FRESH_S
        renewed = [m for at, m in taken if at < late]
        for message in renewed:
            client.extend(message, self.config.message_timeout_ms)
        if renewed:
            client.flush()


def _committed(client: QueueClient, polled: list[Message], refused: int) -> list[Message]:
    """``polled``, unless the group refused their offsets' commit (it moves,
    as after a broker's stall): then whoever reads those partitions next
    delivers them again, and handed out now they would be received twice.
    Kept back, each is received once: as read again, or, if no one reads it
    again before its visibility timeout, as the tracker redelivers it."""
    if client.refused_commits == refused:
        return polled
    log.warning(
        "%s: %d messages not handed out: their offsets were not committed, so they are read again",
        client.config.topic,
        len(polled),
    )
    return []


def _close(client: QueueClient) -> None:
    try:
        client.close()
    except Exception:
        log.exception("closing an SQS receiver's client")


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
