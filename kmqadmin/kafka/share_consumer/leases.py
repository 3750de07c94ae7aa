"""What a member holds and until when, and acknowledgements as the broker
takes them.

Every record acquired by one ShareFetch (or renewed by one RENEW) shares one
lock deadline: a Lease. The deadline is counted from when the request was
sent, so it is never later than the broker's own. Acknowledgements go out one
request per lease: the broker rolls back every acknowledgement of a
partition in a request when one of them is refused, and records of one lease
are in time, or late, together, so one stale ack cannot void another's.
"""

import time
from collections.abc import Iterable
from dataclasses import dataclass

# KIP-932 acknowledge types.
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4


@dataclass(eq=False, slots=True)
class Lease:
    """Records acquired (or renewed) together, on one leader."""

    node: int
    deadline: float  # time.monotonic()
    lock_ms: int

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.deadline


def batches(acks: Iterable[tuple[int, int]]) -> list[tuple[int, int, list[int]]]:
    """(offset, type) pairs of one partition as AcknowledgementBatches:
    contiguous offsets become one (first, last, types) entry, with a single
    type when every offset of the run has the same one."""
    out: list[tuple[int, int, list[int]]] = []
    for offset, kind in sorted(acks):
        if out and out[-1][1] == offset - 1:
            first, _, types = out[-1]
            types.append(kind)
            out[-1] = (first, offset, types)
        elif out and out[-1][1] == offset:
            continue  # acknowledged twice in one flush: the first one counts
        else:
            out.append((offset, offset, [kind]))
    return [(first, last, _compact(types)) for first, last, types in out]


def _compact(types: list[int]) -> list[int]:
    return types[:1] if len(set(types)) == 1 else types
