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

import threading
from collections.abc import Callable


def within(call: Callable[[], object], timeout_s: float, name: str) -> threading.Thread | None:
    """Runs ``call`` for at most ``timeout_s``: None once it has returned
    (what it raised is raised here), else the thread it still runs on."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the caller, who decides
            raised.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        return thread
    if raised:
        raise raised[0]
    return None
