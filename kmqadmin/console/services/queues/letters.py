"""A DLQ letter as the console and the API show it, and redriving one."""

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from confluent_kafka import Message as KafkaMessage
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.console.models import AuditEntry, Queue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.conflict import Conflict
from kmqadmin.console.services.missing import Missing
from kmqadmin.kafka.client.record import UNDECODABLE, UndecodableRecord, hexed
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kmq import headers as h
from kmqadmin.kmq.draft import Draft, NotEditable, changes, check_size, of_record, text_or_base64
from kmqadmin.kmq.readers.dead_letters import LetterFilter
from kmqadmin.kmq.readers.twin_letters import TwinLetters

# The audit actions that send one letter back to its queue.
REDRIVES = ("redrive", "redrive with edits")
# A bulk redrive (services/jobs.py) is audited here, where its marks are read.
BULK_REDRIVE = "bulk redrive"


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode(errors="replace")


def letter_fields(letter: KafkaMessage) -> dict:
    """Text where the payload is UTF-8, base64 where it is not. A letter whose
    headers do not decode is shown as undecodable, its key and value in hex."""
    try:
        record_headers = read_headers(letter) or []
    except UndecodableRecord as exc:
        return _undecodable_fields(exc)
    shown_value, encoding = text_or_base64(letter.value())
    return {
        "partition": letter.partition(),
        "offset": letter.offset(),
        "timestamp_ms": letter.timestamp()[1],
        "dead_lettered_ms": h.decode_ms(h.find(record_headers, h.DLQ_AT)),
        "id": _text(h.find(record_headers, h.MESSAGE_ID)),
        "reason": _text(h.find(record_headers, h.DLQ_REASON)),
        "detail": _text(h.find(record_headers, h.DLQ_DETAIL)),
        "key": _text(letter.key()),
        "value": shown_value,
        "encoding": encoding,
        "headers": {k: _text(v) or "" for k, v in record_headers},
    }


def page_fields(letters: Iterable[KafkaMessage], masking: MaskRules | None = None) -> list[dict]:
    """``letter_fields`` of a page's letters, each with ``duplicate_of``: the
    offset of an earlier letter in the page of the same failed record (a
    twin, kmq.readers.twin_letters), else None. One message, not two. ``masking``:
    the rules of a masked audience (twins are still found on the clear letters)."""
    twins = TwinLetters()
    return [
        {**letter_fields(shown_letter(letter, masking)), "duplicate_of": twins.twin_of(letter)}
        for letter in letters
    ]


def redrives(queue: Queue, letters: list[KafkaMessage]) -> dict[tuple[int, int], dict]:
    """Who sent which of these letters back, when: (partition, offset) to
    ``at``, ``by`` and ``to`` (the queue's topic), from the audit log, two
    queries a page. A letter stays in the DLQ once redriven (Kafka deletes
    nothing), so without this mark it looks as if nobody had dealt with it.
    A bulk redrive's entry names its filter and the offsets it went through
    (services/jobs.py, redrive_letters): the letters there that match it went back."""
    marks = _bulk_redrives(queue, letters)
    targets = {_target(queue, letter) for letter in letters}
    done = AuditEntry.objects.filter(
        action__in=REDRIVES, status=AuditEntry.Status.DONE, target__in=targets
    ).order_by("at")
    for entry in done:
        before = entry.before if isinstance(entry.before, dict) else {}
        place = (before.get("partition"), before.get("offset"))
        if place not in marks or marks[place]["at"] <= entry.at:  # the latest says
            marks[place] = _mark(queue, entry)
    return marks


def bulk_redrive_target(queue: Queue, partition: int) -> str:
    """What a bulk redrive's audit entry names: the DLQ partition it reads."""
    return f"{queue.topic}/dlq/{partition}"


def _bulk_redrives(queue: Queue, letters: list[KafkaMessage]) -> dict[tuple[int, int], dict]:
    by_target = {bulk_redrive_target(queue, p): p for p in {m.partition() for m in letters}}
    entries = AuditEntry.objects.filter(action=BULK_REDRIVE, target__in=by_target)
    marks = {}
    for entry in entries.order_by("at"):
        span, wanted = _bulk_span(entry)
        partition = by_target[entry.target]
        for found in letters:
            place = (found.partition(), found.offset())
            if place[0] == partition and place[1] in span and wanted(found):
                marks[place] = _mark(queue, entry)
    return marks


def _bulk_span(entry: AuditEntry) -> tuple[range, LetterFilter]:
    """The offsets a bulk redrive went through and its filter; none for an
    entry written before it kept them, or damaged since."""
    try:
        low, through = entry.after["offsets"]
        return range(low, through), LetterFilter.from_json(entry.before["filter"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return range(0), LetterFilter()


def _mark(queue: Queue, entry: AuditEntry) -> dict:
    return {"at": entry.at, "by": entry.username or "—", "to": queue.topic}


def shown_letter(letter: KafkaMessage, masking: MaskRules | None) -> KafkaMessage:
    return letter if masking is None else masking.record(letter)


def _undecodable_fields(exc: UndecodableRecord) -> dict:
    return {
        "partition": exc.partition,
        "offset": exc.offset,
        "timestamp_ms": exc.timestamp,
        "dead_lettered_ms": None,  # in the headers that do not decode
        "id": None,
        "reason": UNDECODABLE,
        "detail": str(exc),
        "key": hexed(exc.key),
        "value": hexed(exc.value),
        "encoding": "hex",
        "headers": {},
    }


def letter(queue: Queue, partition: int, offset: int) -> KafkaMessage:
    """The letter at these coordinates of the queue's DLQ; Missing if none."""
    letters = clients.dead_letters(queue.config())
    known = partition in letters.partitions()
    found = letters.get(partition, offset) if known else None
    if found is None:
        raise Missing(f"no letter at {partition}/{offset} of {queue.topic}'s DLQ")
    return found


def redrive(user: AbstractBaseUser, queue: Queue, partition: int, offset: int) -> KafkaMessage:
    """One letter back to the queue, delivery count reset; returns the letter."""
    found = letter(queue, partition, offset)
    with audit.action(
        user,
        "redrive",
        _target(queue, found),
        before={"partition": partition, "offset": offset},
        after={"topic": queue.topic},
    ):
        clients.dead_letters(queue.config()).redrive([found])
    return found


def editable(found: KafkaMessage) -> Draft:
    """A letter as its redrive with edits starts: key, value, the user's
    headers. One whose headers do not decode cannot be edited (Conflict):
    it can be redriven as it is."""
    try:
        record_headers = read_headers(found) or []
    except UndecodableRecord:
        raise Conflict(
            f"letter {found.partition()}/{found.offset()}: its headers cannot be read; "
            "redrive it as it is"
        ) from None
    try:
        return of_record(found.key(), found.value(), record_headers)
    except NotEditable as exc:
        raise Conflict(
            f"letter {found.partition()}/{found.offset()}: {exc}; redrive it as it is"
        ) from None


def redrive_with_edits(
    user: AbstractBaseUser, queue: Queue, found: KafkaMessage, edits: Mapping[str, Any]
) -> str:
    """A letter (``letter``) back to the queue as a plain redrive sends it
    (kmq-id kept, delivery count reset, its first partition), its key, value
    or headers replaced by ``edits`` (a Draft's fields: the API's body gives
    some, the console's form all three); audited with what changed. Returns
    its kmq-id. Conflict when the letter cannot be edited (``editable``)."""
    start = editable(found)
    edit = replace(start, **edits)
    check_size(edit, settings.KMQ_MAX_PAYLOAD_BYTES, clients.record_limit(queue.config()))
    before, after = changes(start, edit)
    target = _target(queue, found)
    where = {"partition": found.partition(), "offset": found.offset()}
    with audit.action(user, "redrive with edits", target, before=where | before, after=after):
        clients.dead_letters(queue.config()).redrive([found], edit)
    return target


def _target(queue: Queue, found: KafkaMessage) -> str:
    """The letter's kmq-id, or its place in the DLQ when it names none."""
    stable = h.find_in(found, h.MESSAGE_ID)
    where = f"{queue.topic}/dlq/{found.partition()}/{found.offset()}"
    return stable.decode(errors="replace") if stable else where
