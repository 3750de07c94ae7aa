"""Consumer processes for bench/queues.py: spawned once, given one job per run.

A consumer is a process, not a thread, as in production: four consumers are
four interpreters, so the GIL is not what is measured. The parent and the
workers share three numbers: how many records each worker acknowledged, how
many the run expects (workers stop once all are acknowledged), and whether
the measured phase has begun (records acknowledged before it are the
warm-up that proves every consumer has joined).
"""

import heapq
import multiprocessing
import queue
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from bench.queue_systems import MustSettle, System, Target, open_system

UNBOUNDED = 2**62


@dataclass(frozen=True)
class Job:
    system: str
    target: Target
    batch: int
    poll_timeout: float
    # Head of line: every slow_every-th record a worker receives takes
    # slow_ms, done aside (as an awaited call would be) while the rest go on.
    slow_every: int = 0
    slow_ms: int = 0
    latency: bool = False  # record produce → ack for each measured record


@dataclass
class Result:
    acked: int  # measured records this worker acknowledged
    finished: float  # time.monotonic() once its last acknowledgement was confirmed
    latencies_ms: list[float] = field(default_factory=list)


class Shared:
    """The numbers parent and workers share, in shared memory without locks:
    each worker writes only its own count."""

    def __init__(self, ctx: Any, workers: int) -> None:
        self.acked = ctx.RawArray("q", workers)
        self.target = ctx.RawValue("q", UNBOUNDED)
        self.measuring = ctx.RawValue("b", 0)

    def done(self) -> bool:
        return sum(self.acked) >= self.target.value


def consume(index: int, job: Job, shared: Shared) -> Result:
    system = open_system(job.system, job.target)
    try:
        result = _loop(index, job, shared, system)
        system.finish()
        result.finished = time.monotonic()
        return result
    finally:
        system.close()


def _loop(index: int, job: Job, shared: Shared, system: System) -> Result:
    result = Result(0, 0.0)
    held: list[tuple[float, int, Any]] = []  # (due, tie-break, record): slow ones in progress
    received, slow_s = 0, job.slow_ms / 1000

    def acknowledge(done: list[Any]) -> None:
        acked = system.ack(done, [entry[2] for entry in held])
        shared.acked[index] += len(acked)
        if shared.measuring.value:
            result.acked += len(acked)
            if job.latency:
                now_ms = time.time() * 1000
                result.latencies_ms.extend(now_ms - system.created_ms(r) for r in acked)

    while not shared.done():
        now = time.monotonic()
        if due := _pop_due(held, now):
            acknowledge(due)
        timeout = min(job.poll_timeout, max(0.0, held[0][0] - now)) if held else job.poll_timeout
        try:
            records = system.poll(job.batch, timeout)
        except MustSettle:
            if not held:
                raise
            time.sleep(max(0.0, max(entry[0] for entry in held) - time.monotonic()))
            continue
        if job.slow_every and shared.measuring.value:
            done = []
            for record in records:
                received += 1
                if received % job.slow_every:
                    done.append(record)
                else:
                    heapq.heappush(held, (time.monotonic() + slow_s, received, record))
            records = done
        if records:
            acknowledge(records)
    return result


def _pop_due(held: list[tuple[float, int, Any]], now: float) -> list[Any]:
    due = []
    while held and held[0][0] <= now:
        due.append(heapq.heappop(held)[2])
    return due


def serve(index: int, jobs: Any, results: Any, shared: Shared) -> None:
    """A worker process: runs jobs until it is sent None."""
    while (job := jobs.get()) is not None:
        try:
            results.put(consume(index, job, shared))
        except Exception:  # reported to the parent, which stops the run
            results.put(traceback.format_exc())


class Workers:
    """``count`` consumer processes; a run uses the first len(jobs) of them."""

    def __init__(self, count: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.shared = Shared(ctx, count)
        self._jobs = [ctx.Queue() for _ in range(count)]
        self._results = ctx.Queue()
        self._processes = [
            ctx.Process(target=serve, args=(i, q, self._results, self.shared), daemon=True)
            for i, q in enumerate(self._jobs)
        ]
        for process in self._processes:
            process.start()
        self._running = 0

    def start(self, jobs: list[Job]) -> None:
        shared = self.shared
        shared.measuring.value, shared.target.value = 0, UNBOUNDED
        for i in range(len(shared.acked)):
            shared.acked[i] = 0
        for job, jobs_queue in zip(jobs, self._jobs, strict=False):
            jobs_queue.put(job)
        self._running = len(jobs)

    def acked(self) -> int:
        return sum(self.shared.acked)

    def measure(self) -> None:
        self.shared.measuring.value = 1

    def finish(self, target: int, timeout: float) -> list[Result]:
        """Waits until ``target`` records are acknowledged and every worker is done."""
        self.shared.target.value = target
        deadline = time.monotonic() + timeout
        results: list[Result] = []
        try:
            while len(results) < self._running:
                result = self._results.get(timeout=max(0.1, deadline - time.monotonic()))
                if isinstance(result, str):
                    raise RuntimeError(f"a consumer failed:\n{result}")
                results.append(result)
        except queue.Empty:
            raise TimeoutError(
                f"{self.acked()} of {target} acknowledged after {timeout:.0f} s"
            ) from None
        return results

    def close(self) -> None:
        self.shared.target.value = 0  # a run that failed midway: its workers stop
        for jobs_queue in self._jobs:
            jobs_queue.put(None)
        for process in self._processes:
            process.join(10)
            if process.is_alive():
                process.kill()
