"""A phase run on every client process at once, and the CPU it cost: the
clients' own, the server process's, and the machine's (bench/sqs.py).

Read from /proc, so Linux only; the machine's CPU less the clients' is the
server's whole side, whatever processes it runs in.
"""

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """CPU time every process of the machine has used (/proc/stat), idle
    and I/O wait left out."""
    jiffies = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(jiffies) - jiffies[3] - jiffies[4]) / os.sysconf("SC_CLK_TCK")


def timed(task: Callable, *args: Any) -> tuple[Any, float]:
    """``task``'s result in a client process, with the CPU it took there."""
    started = time.process_time()
    return task(*args), time.process_time() - started


SAMPLE_S = 0.02


class CpuSamples:
    """The machine's CPU and the server process's, every SAMPLE_S while a
    phase runs: read at the phase's own end, which for a drain is its last
    delete, not the moment the clients' last long polls come back empty."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples = [self._sample()]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(self._sample())

    def at(self, when: float) -> tuple[float, float]:
        """(machine, server) CPU seconds as last sampled by ``when``."""
        taken = [s for s in self.samples if s[0] <= when] or self.samples[:1]
        return taken[-1][1], taken[-1][2]

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.samples.append(self._sample())

    def _sample(self) -> tuple[float, float, float]:
        return time.monotonic(), machine_cpu_seconds(), cpu_seconds(self.pid)


@dataclass
class Phase:
    """A phase run on every client at once: when it started and ended
    (time.monotonic, one clock for every process of the machine), each
    client's result and CPU, and the machine's and server's CPU samples."""

    started: float
    ended: float
    results: list[Any]
    client_cpu_s: float
    cpu: CpuSamples

    @property
    def seconds(self) -> float:
        return self.ended - self.started

    @property
    def machine_cpu_s(self) -> float:
        return self.cpu.at(self.ended)[0] - self.cpu.at(self.started)[0]

    @property
    def server_cpu_s(self) -> float:
        return self.cpu.at(self.ended)[1] - self.cpu.at(self.started)[1]

    @property
    def server_side_cpu_s(self) -> float:
        """The machine's CPU less the clients': the server's whole side (ours:
        the web process, the broker and the tracker; ElasticMQ: its JVM)."""
        return self.machine_cpu_s - self.client_cpu_s


def phase(pool: Pool, pid: int, task: Callable, args: list[tuple]) -> Phase:
    cpu, started = CpuSamples(pid), time.monotonic()
    timed_results = pool.starmap(timed, [(task, *a) for a in args])
    ended = time.monotonic()
    cpu.stop()
    clients = sum(client_cpu for _, client_cpu in timed_results)
    return Phase(started, ended, [r for r, _ in timed_results], clients, cpu)
