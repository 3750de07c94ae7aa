"""Reads payloads back on a thread of its own, so firing never waits for a read.

A read-back scans a run of the schedules topic and may take tens of
milliseconds; done inline, everything due meanwhile on every other partition
would fire that much late. The scheduler's loop hands batches of due
coordinates here and picks them up on a later turn, made ready to fire
(checked and turned into target records here too, off the firing loop).
"""

import logging
import queue
import threading
from collections.abc import Hashable

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.offset_reader import OffsetReader, ReadTimeout
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.scheduler import wire
from kmqadmin.scheduler.partition import Armed, Key, PartitionState
from kmqadmin.scheduler.store import key_hash

log = logging.getLogger(__name__)

Due = list[tuple[int, int, int, int]]  # (deadline, offset, hi, lo), as pop_due gives them
# Per due schedule: its key, its offset, and the armed entry, or why it cannot
# fire, or None when its record is gone (compacted: a later version exists).
Ready = list[tuple[Key, int, Armed | str | None]]
# None instead of a Ready list: the read timed out, and the owner must read
# the partition afresh (the due schedules are out of its store).
Done = tuple[Hashable, Ready | None]


def prepare(due: Due, records: dict[int, KafkaMessage], topic: str) -> Ready:
    """What each due schedule becomes once its record is read back."""
    ready: Ready = []
    for deadline, offset, hi, lo in due:
        record = records.get(offset)
        if record is None or key_hash(record.key() or b"") != (hi, lo):
            ready.append(((hi, lo), offset, None))
            continue
        try:
            target = wire.target(record, topic)
        except wire.ScheduleError as exc:  # checked on read; only a changed rule gets here
            ready.append(((hi, lo), offset, str(exc)))
            continue
        ready.append(((hi, lo), offset, Armed(deadline, offset, record.key(), target)))
    return ready


class ReadAhead:
    def __init__(self, reader: OffsetReader) -> None:
        self._reader = reader
        self._topic = reader.topic
        self._requests: queue.SimpleQueue[tuple[Hashable, int, Due] | None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[Done] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="kmq-scheduler-read", daemon=True)
        self._thread.start()

    def request_due(self, state: PartitionState, lookahead: int, limit: int) -> None:
        """Once the next schedule is within the lookahead, takes everything due
        within twice that out of the store and has it read back in one batch:
        one read per lookahead per partition, however dense the schedules."""
        now = now_ms()
        next_deadline = state.store.next_deadline()
        if next_deadline is None or next_deadline > now + lookahead:
            return
        due = state.store.pop_due(now + 2 * lookahead, limit)
        if due:
            for deadline, offset, hi, lo in due:
                state.reading[(hi, lo)] = (deadline, offset)
            self.request(state, state.partition, due)

    def request(self, owner: Hashable, partition: int, due: Due) -> None:
        """Reads the records of ``due``; ``owner`` comes back with them, so a
        result for a partition since dropped or rebuilt can be told apart."""
        self._requests.put((owner, partition, due))

    def finished(self) -> list[Done]:
        """The reads completed since the last call, without waiting."""
        done = []
        while True:
            try:
                done.append(self._done.get_nowait())
            except queue.Empty:
                return done

    def close(self) -> None:
        self._requests.put(None)
        self._thread.join(30)
        self._reader.close()

    def _run(self) -> None:
        while (request := self._requests.get()) is not None:
            owner, partition, due = request
            try:
                records = self._reader.read(partition, (o for _, o, _, _ in due))
            except ReadTimeout as exc:
                log.warning("%s", exc)
                self._done.put((owner, None))
            else:
                self._done.put((owner, prepare(due, records, self._topic)))
