"""A share group member's heartbeat: joins, keeps the assignment current and
leaves, on the protocol client's I/O loop.

The member id is ours (a UUID kept for the consumer's life, as KIP-932 has
it). A fenced or unknown member rejoins with epoch 0; a moved or loading
coordinator is looked up again; errors that no retry can fix (authorization,
a full group) are kept for the consumer to raise on its next call.
"""

import logging
import uuid

import kafka.errors as protocol_errors
from kafka.net.manager import KafkaConnectionManager
from kafka.protocol.metadata import CoordinatorType, FindCoordinatorRequest

from kmqadmin.kafka.client.clock import to_s
from kmqadmin.kafka.protocol import ShareGroupHeartbeatRequest
from kmqadmin.kafka.share_consumer.errors import error_name

log = logging.getLogger(__name__)

_REJOIN = {
    protocol_errors.UnknownMemberIdError.errno,
    protocol_errors.FencedMemberEpochError.errno,
}
_RELOCATE = {
    protocol_errors.NotCoordinatorError.errno,
    protocol_errors.CoordinatorNotAvailableError.errno,
    protocol_errors.CoordinatorLoadInProgressError.errno,
}
RETRY_S = 0.2


class Membership:
    """The member's identity, epoch and assigned partitions of its topic."""

    def __init__(self, manager: KafkaConnectionManager, group_id: str, topic: str) -> None:
        self._manager = manager
        self.group_id = group_id
        self.topic = topic
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.partitions: frozenset[int] = frozenset()
        self.fatal: Exception | None = None
        self._coordinator: int | None = None
        self._closing = False
        self._interval_s = 1.0

    def start(self) -> None:
        self._manager.call_soon(self._beat_forever)

    async def leave(self) -> None:
        """One last heartbeat with epoch -1: the group hands our partitions to
        the others at once and releases what we still hold."""
        self._closing = True
        if self._coordinator is None or self.epoch <= 0:
            return
        self.epoch = -1
        try:
            await self._manager.wait_for(self._manager.call_soon(self._beat), 3000)
        except protocol_errors.KafkaError as exc:
            log.info("%s: leaving the share group failed (%s)", self.group_id, exc)

    async def _beat_forever(self) -> None:
        net = self._manager._net
        while not self._closing and self.fatal is None:
            try:
                await self._beat()
                delay = self._interval_s
            except protocol_errors.KafkaError as exc:
                log.debug("%s: heartbeat failed (%s); retrying", self.group_id, exc)
                self._coordinator = None
                delay = RETRY_S
            except Exception:  # a heartbeat that stops silently loses the member
                log.exception("%s: heartbeat failed; retrying", self.group_id)
                self._coordinator = None
                delay = RETRY_S
            await net.sleep(delay)

    async def _beat(self) -> None:
        if self._coordinator is None:
            self._coordinator = await self._find_coordinator()
        request = ShareGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=self.member_id,
            member_epoch=self.epoch,
            subscribed_topic_names=[self.topic] if self.epoch >= 0 else None,
        )
        response = await self._manager.send(request, node_id=self._coordinator)
        code = response.error_code
        if code in _RELOCATE:
            self._coordinator = None
            return
        if code in _REJOIN:
            if self._closing:
                return  # leaving anyway: a rejoin now would keep the partitions
            log.info("%s: member %s rejoins (%s)", self.group_id, self.member_id, error_name(code))
            self.epoch, self.partitions = 0, frozenset()
            return
        if code:
            self.fatal = protocol_errors.for_code(code)(response.error_message or "")
            log.error("%s: share group heartbeat refused: %s", self.group_id, error_name(code))
            return
        if self.epoch < 0:
            return
        self.epoch = response.member_epoch
        self._interval_s = to_s(max(response.heartbeat_interval_ms, 100))
        if response.assignment is not None:
            self.partitions = self._ours(response.assignment.topic_partitions)

    def _ours(self, assigned: list) -> frozenset[int]:
        topic_id = self._manager.cluster.topic_id(self.topic)
        return frozenset(p for tp in assigned if tp.topic_id == topic_id for p in tp.partitions)

    async def _find_coordinator(self) -> int:
        request = FindCoordinatorRequest(
            key_type=CoordinatorType.GROUP.value, coordinator_keys=[self.group_id], min_version=4
        )
        response = await self._manager.send(request)
        (found,) = response.coordinators
        if found.error_code:
            raise protocol_errors.for_code(found.error_code)(found.error_message or "")
        return self._manager.cluster.add_coordinator(
            found, CoordinatorType.GROUP, self.group_id, synthesize_node_id=False
        )
