"""Bulk jobs: long reads and writes that a request must not wait for.

Each reports progress through its Celery state (PROGRESS with counts), which
the API's task endpoint and the console's progress bar read. They live with
the services they extend, not in ``workers/``, so the console and the API
start them without importing the worker side (which imports the models).

Each is audited from its start (pending) to its end (done) or failure
(failed, with the error), its entry keeping the counts reached either way.

Each task keeps the name it had in ``kmqadmin/workers/tasks.py``: a task name
is what travels through the broker and what beat's schedule names, so a job
queued before an upgrade still finds its task after it.
"""

from contextlib import AbstractContextManager
from dataclasses import dataclass

from celery import Task, shared_task
from celery.result import AsyncResult
from celery.utils import uuid
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied

from kmqadmin.console.models import AuditEntry, Job, Queue
from kmqadmin.console.services.alerts.evaluation import check_all
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.missing import Missing
from kmqadmin.console.services.queues.letters import BULK_REDRIVE, bulk_redrive_target
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import DeadLetters, LetterFilter
from kmqadmin.kmq.readers.twin_letters import TwinLetters
from kmqadmin.kmq.replay import Replayer, purge

PAGE = 500
NAME = "kmqadmin.workers.tasks.{}"


@shared_task(bind=True, name=NAME.format("redrive_letters"))
def redrive_letters(
    self: Task, queue_id: int, partition: int, match: dict, user_id: int | None
) -> dict:
    """Every letter of a DLQ partition that matches, back to the queue.

    Reads page by page from a seek (never the whole partition at once) and
    redrives each page with one wait for the broker. Letters that arrive
    while it runs are included up to where it stops. A twin letter (the same
    failed record written twice, kmq.readers.twin_letters) is skipped and counted:
    its message goes back once.

    Its audit entry keeps the offsets it has dealt with, ``[low, through)``:
    every letter there that the filter matches went back (itself or its
    twin), which is how the DLQ page marks each one redriven
    (letters.redrives) without an entry per letter."""
    queue = Queue.objects.select_related("cluster").get(pk=queue_id)
    wanted = LetterFilter.from_json(match)
    target = bulk_redrive_target(queue, partition)
    counts = {"redriven": 0, "duplicates": 0}
    with _audit(user_id, BULK_REDRIVE, target, {"filter": match}, dict(counts)) as entry:
        letters, twins = DeadLetters(queue.config()), TwinLetters()
        try:
            low, high = letters.bounds(partition)
            start: int | None = None
            while True:
                page = letters.page(partition, PAGE, start, wanted)
                firsts = [letter for letter in page.letters if twins.twin_of(letter) is None]
                letters.redrive(firsts)
                counts["redriven"] += len(firsts)
                counts["duplicates"] += len(page.letters) - len(firsts)
                through = page.letters[-1].offset() + 1 if page.letters else None
                entry.after = dict(counts) | _span(entry.after, low, through)
                position = high if page.next_offset is None else page.next_offset
                fraction = (position - low) / max(high - low, 1)
                self.update_state(state="PROGRESS", meta=progress(fraction, **counts))
                if page.next_offset is None:
                    break
                start = page.next_offset
        finally:
            letters.close()
    return progress(1.0, **counts)


def _span(after: dict, low: int, through: int | None) -> dict:
    """The ``offsets`` a bulk redrive has dealt with, ``[low, through)``;
    kept as it was when a page brought no letter."""
    if through is None:
        return {"offsets": after["offsets"]} if "offsets" in after else {}
    return {"offsets": [low, through]}


@shared_task(bind=True, name=NAME.format("replay_range"))
def replay_range(self: Task, queue_id: int, span: dict, user_id: int | None) -> dict:
    """A range of the queue sent again as fresh messages; ``span`` holds
    partition (None: all), start / end offsets or since_ms / until_ms."""
    queue = Queue.objects.select_related("cluster").get(pk=queue_id)
    sent = 0
    with _audit(user_id, "replay", queue.topic, {"span": span}, {"replayed": 0}) as entry:
        replayer = Replayer(queue.config())
        try:
            spans = replayer.spans(**span)
            total = max(sum(s.size for s in spans), 1)
            done = 0
            for s in spans:
                before = sent
                for position, sent_here in replayer.replay(s):
                    sent = before + sent_here
                    entry.after = {"replayed": sent}
                    fraction = (done + position - s.start) / total
                    self.update_state(state="PROGRESS", meta=progress(fraction, replayed=sent))
                done += s.size
        finally:
            replayer.close()
    return progress(1.0, replayed=sent)


@shared_task(bind=True, name=NAME.format("purge_queue"))
def purge_queue(self: Task, queue_id: int, user_id: int | None) -> dict:
    """The workers' group past every message, and what is in flight acked."""
    queue = Queue.objects.select_related("cluster").get(pk=queue_id)
    with _audit(user_id, "purge", queue.topic) as entry:
        self.update_state(state="PROGRESS", meta=progress(0.0))
        done = entry.after = purge(queue.config())
    return progress(1.0, **done)


@shared_task(name=NAME.format("analytics"))
def analytics(window_s: int) -> dict:
    """Beat's periodic batch run: the last ``window_s`` seconds recomputed."""
    # Imported here: only the worker that runs the job starts a JVM.
    from kmqadmin.console.analytics import run_batch

    results = run_batch(now_ms() - window_s * 1000)
    return {
        cluster.name: {"messages": r.facts, "minutes": len(r.minutes)} for cluster, r in results
    }


@shared_task(name=NAME.format("alerts"))
def alerts() -> dict[str, int]:
    """Beat's minute: every enabled alert rule checked, changes told."""
    return check_all()


def _audit(
    user_id: int | None, action: str, target: str, before: object = None, after: object = None
) -> AbstractContextManager[AuditEntry]:
    """The job's entry, as its requester (None if deleted since)."""
    user = get_user_model().objects.filter(pk=user_id).first()
    return audit.action(user, action, target, before, after)


def progress(fraction: float, **counts: int) -> dict:
    """A job's progress as its Celery state carries it: its counts so far and
    the fraction done, 0 to 1 (what the API and the progress bar show)."""
    return {**counts, "fraction": round(min(1.0, max(0.0, fraction)), 3)}


@dataclass(frozen=True)
class JobStatus:
    """Where a job stands, read back from its Celery result."""

    state: str
    progress: dict  # the counts and fraction of progress(); empty before the first report
    error: str | None  # what a failed job raised

    @property
    def percent(self) -> int:
        default = 1.0 if self.state == "SUCCESS" else 0.0
        return round(100 * self.progress.get("fraction", default))


def start(task: Task, user: AbstractBaseUser, *args: object) -> AsyncResult:
    """Queues a job, its starter recorded first: a job's progress (counts of
    what it touched) is for its starter and the admins alone."""
    task_id = uuid()
    Job.objects.create(task_id=task_id, started_by=user)
    return task.apply_async(args, task_id=task_id)


def job_status(task_id: str, user: AbstractBaseUser) -> JobStatus:
    """Where a job stands; Missing for an unknown id, PermissionDenied for
    another user's job (admins see every job)."""
    job = Job.objects.filter(task_id=task_id).first()
    if job is None:
        raise Missing(f"no job {task_id}")
    if job.started_by_id != user.pk and role_of(user) < Role.ADMIN:
        raise PermissionDenied("only the job's starter and admins may see its progress")
    result = AsyncResult(task_id)
    state, info = result.state, result.info  # read once: the job may end between two reads
    progress = info if isinstance(info, dict) else {}
    return JobStatus(state, progress, str(info) if state == "FAILURE" else None)
