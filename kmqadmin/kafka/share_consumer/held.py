"""What a member holds: each delivery it acquired and has not settled, with
the lease it is held under.

An offset comes back to the same member with a higher delivery count once
its lock ran out, so a delivery is held only at the count it was acquired
at: an acknowledgement of an older delivery must not settle the newer one.
"""

import time
from collections.abc import Iterable

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.share_consumer.acknowledgements import Entry, Refusal
from kmqadmin.kafka.share_consumer.leases import Lease


class Held:
    def __init__(self) -> None:
        # (partition, offset) -> the lease and delivery count it is held at.
        self._leases: dict[tuple[int, int], tuple[Lease, int]] = {}

    def __len__(self) -> int:
        return len(self._leases)

    def hold(self, partition: int, offset: int, lease: Lease, delivery_count: int) -> None:
        self._leases[(partition, offset)] = (lease, delivery_count)

    def lease(self, record: KafkaMessage) -> Lease | None:
        """The lease this delivery of a record is held under; None once
        acknowledged, refused, or delivered again since."""
        found = self._leases.get((record.partition(), record.offset()))
        if found is None or found[1] != record.delivery_count():
            return None
        return found[0]

    def stale(self, records: list[KafkaMessage]) -> list[KafkaMessage]:
        """Those of ``records`` no longer held: lock expired, acknowledged
        already, or delivered again since. One clock read per lease."""
        out, checked = [], {}
        for r in records:
            lease = self.lease(r)
            if lease is None:
                out.append(r)
                continue
            if (expired := checked.get(id(lease))) is None:
                expired = checked[id(lease)] = lease.expired
            if expired:
                out.append(r)
        return out

    def forget_expired(self) -> None:
        """Deliveries whose lock has run out are the broker's again: an ack
        of one raises as it would anyway, and the count is of live ones."""
        now = time.monotonic()
        for key in [k for k, (lease, _) in self._leases.items() if lease.deadline <= now]:
            del self._leases[key]

    def release(self, entry: Entry) -> Lease | None:
        """Stops holding what an acknowledgement settles; its lease, or None
        when this delivery is no longer held (a gap's is always)."""
        partition, offset, _, record = entry
        found = self._leases.get((partition, offset))
        if found is None or (record is not None and found[1] != record.delivery_count()):
            return None
        del self._leases[(partition, offset)]
        return found[0]

    def renewed(self, entries: Iterable[Entry], lost: list[Refusal], lease: Lease) -> None:
        """After a RENEW: what the broker refused for sure is no longer held,
        the rest is held under ``lease`` (none renewed when it has no lock)."""
        gone = {(r.record.partition(), r.record.offset()) for r in lost if not r.unknown}
        for partition, offset, _, record in entries:
            key = (partition, offset)
            if key in gone:
                del self._leases[key]
            elif lease.lock_ms and record is not None:
                self._leases[key] = (lease, record.delivery_count())
