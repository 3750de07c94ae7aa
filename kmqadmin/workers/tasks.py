"""Bulk jobs: long reads and writes that a request must not wait for.

Each reports progress through its Celery state (PROGRESS with counts), which
the API's task endpoint and the console's progress bar read.
"""

from celery import Task, shared_task
from django.contrib.auth import get_user_model

from kmqadmin.console import audit
from kmqadmin.console.models import Queue
from kmqadmin.kmq import DeadLetters, LetterFilter

PAGE = 500


@shared_task(bind=True)
def redrive_letters(
    self: Task, queue_id: int, partition: int, match: dict, user_id: int | None
) -> dict:
    """Every letter of a DLQ partition that matches, back to the queue.

    Reads page by page from a seek (never the whole partition at once) and
    redrives each page with one wait for the broker. Letters that arrive
    while it runs are included up to where it stops."""
    queue = Queue.objects.select_related("cluster").get(pk=queue_id)
    wanted = LetterFilter.from_json(match)
    letters = DeadLetters(queue.config())
    redriven = 0
    try:
        low, high = letters.bounds(partition)
        start: int | None = None
        while True:
            page = letters.page(partition, PAGE, start, wanted)
            letters.redrive(page.letters)
            redriven += len(page.letters)
            position = high if page.next_offset is None else page.next_offset
            self.update_state(state="PROGRESS", meta=_progress(redriven, position, low, high))
            if page.next_offset is None:
                break
            start = page.next_offset
    finally:
        letters.close()
    user = get_user_model().objects.filter(pk=user_id).first()
    target = f"{queue.topic}/dlq/{partition}"
    audit.record(
        user, "bulk redrive", target, before={"filter": match}, after={"redriven": redriven}
    )
    return _progress(redriven, high, low, high)


def _progress(redriven: int, position: int, low: int, high: int) -> dict:
    span = max(high - low, 1)
    return {"redriven": redriven, "fraction": round(min(1.0, (position - low) / span), 3)}
