"""How many bulk jobs ran and how long they took, by task and outcome.

Observed in the process that runs the task (a prefork pool's child), so
with ``PROMETHEUS_MULTIPROC_DIR`` set the worker's metrics port adds every
child's numbers up (kmqadmin/metrics/exposition.py); the histogram's
``_count`` is the job count. The receivers are connected when the worker
loads its bootsteps, before the pool forks, so every child has them.
"""

import time

from celery import Task
from celery.signals import task_postrun, task_prerun
from prometheus_client import Histogram

JOB_SECONDS = Histogram(
    "kmqadmin_job_duration_seconds",
    "Celery jobs run, by task name and outcome (success, failure, retry, ...), and their duration",
    ["task", "outcome"],
    buckets=(0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, float("inf")),
)
# task id -> monotonic start, for the tasks running in this process now.
_started: dict[str, float] = {}


@task_prerun.connect
def _start(task_id: str, **_: object) -> None:
    _started[task_id] = time.monotonic()


@task_postrun.connect
def _finish(task_id: str, task: Task, state: str | None = None, **_: object) -> None:
    began = _started.pop(task_id, None)
    if began is not None:
        outcome = (state or "unknown").lower()
        JOB_SECONDS.labels(task.name, outcome).observe(time.monotonic() - began)
