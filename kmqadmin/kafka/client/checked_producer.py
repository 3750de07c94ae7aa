"""An idempotent producer whose flush says whether everything arrived."""

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.config import producer_config

log = logging.getLogger(__name__)

Report = Callable[[KafkaError | None, KafkaMessage], None]
# A waiter whose report another thread's poll served learns of it within
# this (its own poll returns only on an event it serves, or at the timeout).
REPORT_CHECK_S = 0.005


class OutcomeUnknown(Exception):
    """No report on a record within the wait: it may yet be written, or not.
    Not "not delivered": a retry without an idempotency key may write it twice."""


class CheckedProducer:
    """Fire-and-forget produce, and a flush that raises if any record failed,
    so none is lost silently. Delivery reports come only for failures: the
    hot path pays for no per-record callback. ``confirm_each``: a producer of
    single records a person writes, which must say where each one went
    (``produce_confirmed``), as librdkafka reports successes only if asked."""

    def __init__(
        self,
        bootstrap_servers: str,
        extra: Mapping[str, Any] | None = None,
        *,
        confirm_each: bool = False,
    ) -> None:
        self._errors: list[str] = []
        self._confirm_each = confirm_each
        self._producer = Producer(
            producer_config(
                bootstrap_servers,
                extra={
                    "delivery.report.only.error": not confirm_each,
                    "on_delivery": self._delivered,
                    **(extra or {}),
                },
            )
        )

    def produce(self, topic: str, **record: Any) -> None:
        """Queues one record, waiting for room when the local queue is full."""
        while True:
            try:
                self._producer.produce(topic, **record)
                break
            except BufferError:
                self._producer.poll(0.05)
        self._producer.poll(0)

    def produce_confirmed(
        self, topic: str, timeout: float, later: Report | None = None, **record: Any
    ) -> KafkaMessage:
        """One record, waited for: the broker's report of where it went
        (produce_all_confirmed); its error raised."""
        [outcome] = self.produce_all_confirmed(topic, [record], timeout, later)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def produce_all_confirmed(
        self,
        topic: str,
        records: Sequence[Mapping[str, Any]],
        timeout: float,
        later: Report | None = None,
    ) -> list[KafkaMessage | Exception]:
        """Records, waited for together: one wait for the broker, not one
        per record. Each one's outcome in order: where it went, the
        KafkaException it failed with, or OutcomeUnknown when no report came
        within ``timeout`` (``later`` then gets it when it comes, from
        whichever call polls this producer next). The wait is for these
        records' reports alone, not for the rest of the producer's queue
        (other requests' records, one stuck on a broker)."""
        if not self._confirm_each:
            raise TypeError("produce_all_confirmed needs a CheckedProducer(confirm_each=True)")
        reports: dict[int, tuple[KafkaError | None, KafkaMessage]] = {}
        lock, waiting = threading.Lock(), [True]

        def reporter(i: int) -> Report:
            def report(err: KafkaError | None, msg: KafkaMessage) -> None:
                with lock:
                    if waiting[0]:
                        reports[i] = (err, msg)
                        return
                if later is not None:
                    try:
                        later(err, msg)
                    except Exception:  # it runs inside another caller's poll: never theirs to fail
                        log.exception(
                            "the late report on %s/%d failed", msg.topic(), msg.partition()
                        )

            return report

        for i, record in enumerate(records):
            self.produce(topic, on_delivery=reporter(i), **record)
        self._producer.flush(0)  # sent now, not after linger.ms: a caller is waiting
        deadline = time.monotonic() + timeout
        while len(reports) < len(records) and (left := deadline - time.monotonic()) > 0:
            self._producer.poll(min(left, REPORT_CHECK_S))
        with lock:
            waiting[0] = False
            got = dict(reports)
        return [_outcome(got.get(i), timeout) for i in range(len(records))]

    def partitions(self, topic: str, timeout: float = 10.0) -> list[int]:
        """The topic's partitions as the broker knows them now; none if it has no such topic."""
        found = self._producer.list_topics(topic, timeout=timeout).topics.get(topic)
        if found is None or found.error is not None:
            return []
        return sorted(found.partitions)

    def flush(self, timeout: float = 30.0) -> None:
        remaining = self._producer.flush(timeout)
        if remaining:
            raise KafkaException(f"{remaining} records not delivered within {timeout} s")
        if self._errors:
            errors, self._errors = self._errors, []
            raise KafkaException(f"{len(errors)} records failed: {errors[0]}")

    def close(self) -> None:
        """Drops what is still queued (every caller has flushed, and been told
        of what failed) and closes: a producer left to the garbage collector
        lives on in a reference cycle (its delivery callback is a bound
        method), reconnecting to a cluster that may be long gone."""
        self._producer.purge()
        self._producer.close()

    def _delivered(self, err: object, msg: object) -> None:
        if err is not None:
            self._errors.append(str(err))


def _outcome(
    report: tuple[KafkaError | None, KafkaMessage] | None, timeout: float
) -> KafkaMessage | Exception:
    if report is None:
        return OutcomeUnknown(
            f"Kafka did not report on the record within {timeout} s: it may yet be written, or not"
        )
    err, delivered = report
    return delivered if err is None else KafkaException(err)
