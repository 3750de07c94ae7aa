"""A librdkafka call that may never return, made so its caller can walk away.

Some calls ignore their timeouts, or have none, while the coordinator they
wait on is gone or never found again: send_offsets_to_transaction
(librdkafka #5456, #5511) and a consumer's synchronous commit, which has no
timeout at all and waits for a coordinator as long as it takes
(confluent-kafka-python #1801). Such a call runs on a daemon thread of its
own; its caller waits a bounded time and, if it is still running, gives up
on the client. The client must then not be destroyed while the call may
still be inside it: broker_watch.abandon(client, after=the thread) closes it
only once the call has returned.
"""

import queue
import threading
from collections.abc import Callable


class Pending:
    """A call handed to a CallThread, to be waited for later."""

    def __init__(self, thread: threading.Thread) -> None:
        self._thread = thread
        self._done = threading.Event()
        self._raised: BaseException | None = None

    def wait(self, timeout_s: float) -> threading.Thread | None:
        """Waits at most ``timeout_s``: None once the call has returned (what
        it raised is raised here), else the thread it still runs on."""
        if not self._done.wait(timeout_s):
            return self._thread
        if self._raised is not None:
            raise self._raised
        return None

    def finished(self) -> bool:
        """Whether the call has returned (or raised)."""
        return self._done.is_set()

    def run(self, call: Callable[[], object]) -> None:
        try:
            call()
        except BaseException as exc:  # handed to the caller, who decides
            self._raised = exc
        finally:
            self._done.set()


class CallThread:
    """A daemon thread running the calls handed to it in turn, so a caller
    with many of them does not pay a thread's start (a handshake for the
    GIL, milliseconds on a busy process) for each. It ends once idle for
    ``idle_s`` and starts again with the next call: an owner at rest holds
    no thread for it. A call that never returns holds up those after it:
    its caller gives up on the client and on this."""

    def __init__(self, name: str, idle_s: float = 1.0) -> None:
        self._name, self._idle_s = name, idle_s
        self._calls: queue.SimpleQueue[tuple[Pending, Callable[[], object]] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, call: Callable[[], object]) -> Pending:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            pending = Pending(self._thread)
            self._calls.put((pending, call))
        return pending

    def close(self, wait_s: float = 0) -> None:
        """The thread ends once the calls handed to it so far have returned;
        waits up to ``wait_s`` for that."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._calls.put(None)
        if thread is not None:
            thread.join(wait_s)

    def _run(self) -> None:
        while True:
            try:
                item = self._calls.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:  # a call handed over meanwhile keeps it going
                    if self._calls.empty():
                        self._thread = None
                        return
                continue
            if item is None:
                return
            pending, call = item
            pending.run(call)
