"""Twin letters: one failed record written to the DLQ twice.

The share backend moves a record to the DLQ at least once: the letter is
written before the record is accepted, so a crash between the two leaves the
letter, and the record, redelivered after its lock, is moved again. Both
letters carry the record's kmq-id and its timestamp (a letter keeps the
timestamp of the record it was). Two letters of two failures of one message
never share both: each failure is of another copy (redelivered, delayed or
redriven), stamped when that copy was produced. So (kmq-id, timestamp) names
the record that failed, and a second letter naming it is a twin: shown as
such, and not sent back a second time by a redrive.
"""

from collections import OrderedDict

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kmq import headers

# Letters remembered at most: a bulk redrive's memory stays bounded however
# long the DLQ partition (a twin is written soon after its first, when the
# record's lock runs out, so it is within the last ones seen).
REMEMBERED = 100_000


def failed_record(letter: KafkaMessage) -> tuple[bytes, int] | None:
    """The record a letter is of: its kmq-id and timestamp; None when its
    headers do not decode or it has no kmq-id (no twin can be told)."""
    found = headers.find_in(letter, headers.MESSAGE_ID)
    return None if found is None else (found, letter.timestamp()[1])


class TwinLetters:
    """Letters of one DLQ partition, read in offset order (a page, a job)."""

    def __init__(self, remembered: int = REMEMBERED) -> None:
        self.remembered = remembered
        self._first: OrderedDict[tuple[bytes, int], int] = OrderedDict()

    def twin_of(self, letter: KafkaMessage) -> int | None:
        """The offset of an earlier letter of the same failed record, or
        None (and the letter is remembered as the first of its record)."""
        record = failed_record(letter)
        if record is None:
            return None
        first = self._first.get(record)
        if first is not None and first != letter.offset():
            return first
        self._first[record] = letter.offset()
        if len(self._first) > self.remembered:
            self._first.popitem(last=False)
        return None
