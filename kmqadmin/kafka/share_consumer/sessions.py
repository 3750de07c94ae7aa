"""Share sessions (KIP-932): one per leader a member fetches from.

Every ShareFetch and ShareAcknowledge names the session's epoch: 0 opens it
(the request lists its partitions), each answered request moves it on by
one, and -1 closes it. A session the broker no longer knows is opened again
from 0; what it had acquired stays acquired until its locks run out.
"""

from dataclasses import dataclass, field

# The epoch after the largest int32 wraps to 1, never to 0 (which reopens).
_MAX_EPOCH = 2**31 - 1


@dataclass
class Session:
    epoch: int = 0
    partitions: set[int] = field(default_factory=set)

    @property
    def open(self) -> bool:
        return self.epoch > 0

    def answered(self, partitions: set[int]) -> None:
        """A request at this epoch was answered: the session holds ``partitions``."""
        self.partitions = partitions
        self.epoch = 1 if self.epoch >= _MAX_EPOCH else self.epoch + 1

    def reset(self) -> None:
        self.epoch, self.partitions = 0, set()
