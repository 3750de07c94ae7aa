"""ShareConsumer: one member of a share group, fetching with record-limit
acquisition and acknowledging so that no acknowledgement can void another.

- ``poll(max_records)`` acquires at most ``max_records`` records (ShareFetch
  v2, ShareAcquireMode 1) and returns them all: nothing is buffered, so no
  lock runs out in our hands and no delivery attempt is spent on a record the
  caller never saw.
- ``acknowledge`` queues; ``flush`` sends what is queued, one
  ShareAcknowledge per lease (see ``leases``), and returns what the broker
  refused, record by record.
- ``renew`` renews locks (RENEW, KIP-1222) and answers at once.

Blocking calls run coroutines on kafka-python's I/O thread, where the
heartbeat runs too. Not thread-safe: one per worker thread or process.
"""

import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import kafka.errors as protocol_errors
from confluent_kafka import Message as KafkaMessage
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.structs import TopicPartition

from kmqadmin.kafka.client.clock import to_ms, to_s
from kmqadmin.kafka.client.record import mark_undecodable
from kmqadmin.kafka.protocol.config import protocol_config
from kmqadmin.kafka.share_consumer import batches
from kmqadmin.kafka.share_consumer.acknowledgements import Entry, Refusal, refusals
from kmqadmin.kafka.share_consumer.errors import ShareConsumerError, error_name
from kmqadmin.kafka.share_consumer.held import Held
from kmqadmin.kafka.share_consumer.leases import GAP, RELEASE, RENEW, Lease
from kmqadmin.kafka.share_consumer.membership import Membership
from kmqadmin.kafka.share_consumer.requests import acknowledge_request, fetch_request
from kmqadmin.kafka.share_consumer.sessions import Session

log = logging.getLogger(__name__)

MAX_WAIT_S = 0.5  # one fetch's long poll: the heartbeat shares the connection
# A fetch returns whole producer batches even when it acquired a few records
# of one, and the broker may pass MaxBytes for a first large batch (KIP-74):
# kafka-python's 1 MB default for a response would drop the connection.
RECEIVE_MAX_BYTES = 128 * 1024 * 1024
RETRY_S = 0.2
_SESSION_GONE = {
    protocol_errors.ShareSessionNotFoundError.errno,
    protocol_errors.InvalidShareSessionEpochError.errno,
}
_FATAL = {
    protocol_errors.GroupAuthorizationFailedError.errno,
    protocol_errors.TopicAuthorizationFailedError.errno,
}
_LEADER_MOVED = {
    protocol_errors.NotLeaderForPartitionError.errno,
    protocol_errors.UnknownTopicOrPartitionError.errno,
    protocol_errors.UnknownTopicIdError.errno,
}


class ShareConsumer:
    def __init__(
        self,
        bootstrap_servers: str,
        group_id: str,
        topic: str,
        kafka_config: Mapping[str, Any] | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        config = protocol_config(bootstrap_servers, kafka_config, timeout_s)
        config["receive_message_max_bytes"] = RECEIVE_MAX_BYTES
        self.topic = topic
        self._net = NetworkSelector(**config)
        self._manager = KafkaConnectionManager(self._net, **config)
        self._net.start()
        try:
            self._manager.bootstrap(to_ms(timeout_s))
            self._manager.run(self._topic_metadata)
        except BaseException:
            self._stop()
            raise
        self._membership = Membership(self._manager, group_id, topic)
        self._membership.start()
        self._sessions: dict[int, Session] = {}
        self._held = Held()
        self._pending: list[Entry] = []
        self._batches = batches.BatchCache()
        self._turn = 0
        self.acquired = 0  # records handed out, over the consumer's life
        self.malformed = 0  # acquired records in batches that do not decode

    @property
    def member_id(self) -> str:
        return self._membership.member_id

    @property
    def held(self) -> int:
        """Records acquired and not yet acknowledged."""
        return len(self._held)

    def lease(self, record: KafkaMessage) -> Lease | None:
        """The lease this delivery of a record is held under; None once
        acknowledged, refused, or delivered again since."""
        return self._held.lease(record)

    def poll(self, max_records: int, timeout: float) -> list[KafkaMessage]:
        """Up to ``max_records`` newly acquired records, waiting up to
        ``timeout`` seconds for the first."""
        if self._membership.fatal is not None:
            raise ShareConsumerError(f"{self._membership.group_id}: {self._membership.fatal}")
        self._held.forget_expired()
        return self._manager.run(self._poll, max(1, max_records), timeout)

    def acknowledge(self, record: KafkaMessage, kind: int) -> None:
        """Queued until the next flush."""
        self._pending.append((record.partition(), record.offset(), kind, record))

    def acknowledge_all(self, records: list[KafkaMessage], kind: int) -> None:
        self._pending.extend((r.partition(), r.offset(), kind, r) for r in records)

    def stale(self, records: list[KafkaMessage]) -> list[KafkaMessage]:
        """Those of ``records`` no longer held: lock expired, acknowledged
        already, or delivered again since."""
        return self._held.stale(records)

    def flush(self, wait: bool = True) -> list[Refusal]:
        """Sends every queued acknowledgement and waits for the answers (one
        request per lease, whatever ``wait`` says); what the broker refused."""
        if not self._pending:
            return []
        pending, self._pending = self._pending, []
        return self._manager.run(self._send_acks, pending)

    def renew(self, records: Iterable[KafkaMessage]) -> list[Refusal]:
        """Renews the locks of ``records`` for the group's lock duration."""
        return self._manager.run(self._renew, list(records))

    def close(self) -> None:
        """Closes the share sessions and leaves the group (the broker hands
        back what is still held); queued acknowledgements are the caller's
        to flush first."""
        try:
            self._manager.run(self._close_sessions)
            self._manager.run(self._membership.leave)
        except protocol_errors.KafkaError as exc:
            log.info("%s: closing the share consumer: %s", self.topic, exc)
        finally:
            self._stop()

    @property
    def _topic_id(self) -> uuid.UUID | None:
        return self._manager.cluster.topic_id(self.topic)

    # --- on the I/O thread ---------------------------------------------

    async def _topic_metadata(self) -> None:
        cluster = self._manager.cluster
        cluster.add_topic(self.topic)
        await cluster.refresh_metadata()
        if cluster.topic_id(self.topic) is None:
            raise ShareConsumerError(f"topic {self.topic} does not exist")

    async def _poll(self, max_records: int, timeout: float) -> list[KafkaMessage]:
        until = time.monotonic() + timeout
        while True:
            leaders = self._leaders()
            left = until - time.monotonic()
            if leaders:
                nodes = sorted(leaders)
                node = nodes[self._turn % len(nodes)]
                self._turn += 1
                wait = min(MAX_WAIT_S, max(0.0, left)) / len(nodes)
                found = await self._fetch(node, leaders[node], max_records, wait)
                if found:
                    return found
            elif left > 0:
                await self._net.sleep(min(0.05, left))
            if time.monotonic() >= until:
                return []

    def _leaders(self) -> dict[int, set[int]]:
        """Our assigned partitions, by the node that leads each."""
        cluster, out = self._manager.cluster, {}
        for partition in self._membership.partitions:
            node = cluster.leader_for_partition(TopicPartition(self.topic, partition))
            if node is None or node < 0:
                cluster.request_update()
                continue
            out.setdefault(node, set()).add(partition)
        return out

    async def _fetch(
        self, node: int, partitions: set[int], max_records: int, wait_s: float
    ) -> list[KafkaMessage]:
        session = self._sessions.setdefault(node, Session())
        request = fetch_request(
            self._membership, session, self._topic_id, partitions, max_records, to_ms(wait_s)
        )
        sent = time.monotonic()
        try:
            response = await self._manager.send(
                request, node_id=node, request_timeout_ms=to_ms(wait_s) + 30_000
            )
        except protocol_errors.KafkaError as exc:
            log.info("%s: share fetch from node %d failed (%s)", self.topic, node, exc)
            if not isinstance(exc, protocol_errors.NodeNotReadyError):  # else nothing was sent
                session.reset()
            await self._net.sleep(RETRY_S)
            return []
        if response.error_code:
            self._session_error(session, response.error_code, response.error_message)
            if response.error_code not in _SESSION_GONE:
                await self._net.sleep(RETRY_S)
            return []
        session.answered(partitions)
        lock_ms = response.acquisition_lock_timeout_ms
        lease = Lease(node, sent + to_s(lock_ms), lock_ms)
        out: list[KafkaMessage] = []
        failed = False
        for topic in response.responses:
            for part in topic.partitions:
                if part.error_code:
                    self._partition_error(part.partition_index, part.error_code)
                    failed = True
                    continue
                acquired = [
                    batches.Acquired(a.first_offset, a.last_offset, a.delivery_count)
                    for a in part.acquired_records
                ]
                if acquired:
                    out.extend(self._take(part.partition_index, part.records, acquired, lease))
        if failed and not out:
            await self._net.sleep(RETRY_S)  # until metadata or the broker moves on
        return out

    def _take(
        self, partition: int, data: bytes | None, acquired: list[batches.Acquired], lease: Lease
    ) -> list[KafkaMessage]:
        """The acquired records of one partition, each leased. An acquired
        offset with no record inside a batch that was read (a transaction
        marker, a compacted record) is settled as a gap; one in a batch that
        does not decode comes back as an empty record marked undecodable, so
        the caller moves it aside; one the data did not hold at all is
        released, never settled unseen."""
        got: list[KafkaMessage] = []
        covered: list[tuple[int, int]] = []
        broken: batches.BatchError | None = None
        try:
            got.extend(
                batches.records(data, self.topic, partition, acquired, self._batches, covered)
            )
        except batches.BatchError as exc:
            broken = exc
        present = {record.offset() for record in got}
        missing = 0
        for span in acquired:
            for offset in range(span.first, span.last + 1):
                if offset in present:
                    continue
                inside = any(first <= offset <= last for first, last in covered)
                if broken is not None and not inside:
                    got.append(self._broken(partition, offset, span.delivery_count, broken))
                    continue
                missing += not inside
                self._pending.append((partition, offset, GAP if inside else RELEASE, None))
                self._held.hold(partition, offset, lease, span.delivery_count)
        if missing:
            log.warning(
                "%s/%d: %d acquired offsets were not in the fetch's data; released",
                self.topic,
                partition,
                missing,
            )
        for record in got:
            self._held.hold(partition, record.offset(), lease, record.delivery_count())
        self.acquired += len(got)
        return got

    def _broken(
        self, partition: int, offset: int, delivery_count: int, exc: batches.BatchError
    ) -> KafkaMessage:
        self.malformed += 1
        log.error("%s/%d/%d: acquired but undecodable: %s", self.topic, partition, offset, exc)
        record = KafkaMessage(
            topic=self.topic, partition=partition, offset=offset, delivery_count=delivery_count
        )
        mark_undecodable(record)
        return record

    async def _send_acks(self, pending: list[Entry]) -> list[Refusal]:
        by_lease: dict[Lease | None, list[Entry]] = {}
        for entry in pending:
            lease = self._held.release(entry)
            by_lease.setdefault(lease, []).append(entry)
        refused: list[Refusal] = []
        for lease, entries in by_lease.items():
            if lease is None:
                held = "not held: acknowledged already, or delivered again since"
                refused += refusals(entries, held)
            else:
                refused += (await self._acknowledge(lease.node, entries, renew=False))[0]
        return refused

    async def _renew(self, records: list[KafkaMessage]) -> list[Refusal]:
        by_lease: dict[Lease | None, list[Entry]] = {}
        for r in records:
            by_lease.setdefault(self.lease(r), []).append((r.partition(), r.offset(), RENEW, r))
        refused = refusals(by_lease.pop(None, []), "not held by this consumer")
        for lease, entries in by_lease.items():
            lost, lock_ms, sent = await self._acknowledge(lease.node, entries, renew=True)
            refused += lost
            self._held.renewed(entries, lost, Lease(lease.node, sent + to_s(lock_ms), lock_ms))
        return refused

    async def _acknowledge(
        self, node: int, entries: list[Entry], renew: bool
    ) -> tuple[list[Refusal], int, float]:
        """One ShareAcknowledge; (refused, the renewed lock in ms, when sent)."""
        session = self._sessions.get(node)
        if session is None or not session.open:
            gone = "not sent: the share session is being reopened; its lock ends on the broker"
            return refusals(entries, gone, unknown=True), 0, 0
        request = acknowledge_request(self._membership, session, self._topic_id, entries, renew)
        sent = time.monotonic()
        try:
            response = await self._manager.send(request, node_id=node)
        except protocol_errors.KafkaError as exc:
            session.reset()
            return refusals(entries, f"no answer from the broker ({exc})", unknown=True), 0, sent
        if response.error_code:
            self._session_error(session, response.error_code, response.error_message)
            return refusals(entries, error_name(response.error_code)), 0, sent
        session.answered(session.partitions)
        failed = {
            p.partition_index: error_name(p.error_code)
            for t in response.responses
            for p in t.partitions
            if p.error_code
        }
        refused = [
            Refusal(record, kind, failed[partition])
            for partition, _, kind, record in entries
            if partition in failed and record is not None
        ]
        return refused, response.acquisition_lock_timeout_ms, sent

    async def _close_sessions(self) -> None:
        for node, session in self._sessions.items():
            if session.open:
                session.epoch = -1
                request = acknowledge_request(
                    self._membership, session, self._topic_id, [], renew=False
                )
                request.topics = []
                try:
                    await self._manager.wait_for(self._manager.send(request, node_id=node), 3000)
                except protocol_errors.KafkaError as exc:
                    log.debug("%s: closing the share session on %d: %s", self.topic, node, exc)
        self._sessions.clear()

    def _session_error(self, session: Session, code: int, message: str | None) -> None:
        if code in _SESSION_GONE:
            session.reset()
            return
        if code in _FATAL:
            raise ShareConsumerError(f"{self.topic}: {error_name(code)} {message or ''}")
        log.warning("%s: share request refused: %s %s", self.topic, error_name(code), message or "")

    def _partition_error(self, partition: int, code: int) -> None:
        if code in _LEADER_MOVED:
            self._manager.cluster.request_update()
        log.info("%s/%d: share fetch: %s", self.topic, partition, error_name(code))

    def _stop(self) -> None:
        self._manager.close()
        self._net.stop()
