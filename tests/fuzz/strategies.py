"""Hostile records: what any producer (Go, C, kcat, a careless script) can write
into a queue, its markers topic, its DLQ and a schedules topic.

Every byte string is fair game, plus the shapes that reach deeper than
random bytes do: kmq's and the scheduler's own headers with wrong values,
markers of the right length with wrong numbers, kmq-ids that look right.
A marker key is either raw bytes or an ``int``: the index of one of the
example's hostile queue records, resolved once they are written (so a marker
can start, end or reject a hostile record, never a well-formed message).
"""

import struct

from hypothesis import strategies as st

from kmqadmin.kmq import headers as h
from kmqadmin.kmq import markers
from kmqadmin.scheduler import wire
from tests.raw_produce import RawRecord

PARTITIONS = 3
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)

# Text the Python client could write too, and bytes that are not UTF-8 at all.
text_bytes = st.text(max_size=24).map(str.encode)
some_bytes = st.one_of(st.binary(max_size=48), text_bytes)
maybe_bytes = st.one_of(st.none(), some_bytes)

# Names Python producers write, names that are not UTF-8, and ours.
OWN_NAMES = [
    h.MESSAGE_ID,
    h.REDELIVERY_COUNT,
    h.DLQ_REASON,
    h.DLQ_DETAIL,
    wire.EPOCH,
    wire.TARGET_TOPIC,
    wire.TARGET_KEY,
    wire.FIRED_KEY,
    wire.FIRED_TIMESTAMP,
    wire.FIRED_TOPIC,
]
header_name = st.one_of(
    text_bytes,
    st.binary(min_size=1, max_size=16).filter(lambda b: not _is_utf8(b)),
    st.sampled_from([name.encode() for name in OWN_NAMES]),
)
any_header = st.tuples(header_name, maybe_bytes)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def numbers_text(bits: int) -> st.SearchStrategy[str]:
    """Decimal text around and past a ``bits``-wide signed integer, and digits
    ``int`` reads that ASCII does not have."""
    return st.one_of(
        st.integers(-(2 ** (bits + 1)), 2 ** (bits + 1)).map(str),
        st.sampled_from(["", "-0", "٣", "²", "1e3", " 1", "1\n"]),
    )


def kmq_ids(topic: str) -> st.SearchStrategy[bytes]:
    """kmq-ids: arbitrary, and ``<topic>/<partition>/<offset>`` with this queue's
    topic or a hostile one, and numbers in and out of range."""
    plausible = st.builds(
        lambda t, p, o: f"{t}/{p}/{o}".encode(),
        st.one_of(st.just(topic), st.text(max_size=12)),
        st.one_of(st.integers(0, PARTITIONS - 1), numbers_text(32)),
        st.one_of(st.integers(0, 50), numbers_text(64)),
    )
    return st.one_of(some_bytes, plausible)


redelivery_counts = st.one_of(
    st.binary(max_size=6), st.integers(-(2**31), 2**31 - 1).map(h.encode_count)
)


def kmq_headers(topic: str) -> st.SearchStrategy[list[tuple[bytes, bytes | None]]]:
    """Any mix of kmq's own headers, each possibly twice, with values from their
    near-valid ranges or anything."""
    one = st.one_of(
        st.tuples(st.just(h.MESSAGE_ID.encode()), st.one_of(st.none(), kmq_ids(topic))),
        st.tuples(st.just(h.REDELIVERY_COUNT.encode()), st.one_of(st.none(), redelivery_counts)),
        st.tuples(st.just(h.DLQ_REASON.encode()), maybe_bytes),
        st.tuples(st.just(h.DLQ_DETAIL.encode()), maybe_bytes),
    )
    return st.lists(st.one_of(one, any_header), max_size=6)


def queue_records(topic: str) -> st.SearchStrategy[RawRecord]:
    return st.builds(
        RawRecord,
        maybe_bytes,
        key=maybe_bytes,
        headers=kmq_headers(topic),
        partition=st.integers(0, PARTITIONS - 1),
    )


# Offsets no well-formed message of the suite can have: negative or far ahead.
_FAR_OFFSET = st.one_of(st.integers(-(2**63), -1), st.integers(2**40, 2**63 - 1))
marker_keys = st.one_of(
    st.binary(max_size=24).filter(lambda b: len(b) != markers.KEY.size),
    st.builds(markers.KEY.pack, INT32, _FAR_OFFSET),
    st.integers(0, 1000),  # a hostile queue record of this example, by index
)
_DEADLINE = struct.Struct(">q")
marker_values = st.one_of(
    st.none(),
    st.binary(max_size=24),
    st.builds(lambda kind, n: bytes([kind]) + _DEADLINE.pack(n), st.sampled_from([1, 3]), INT64),
    st.builds(lambda rest: b"\x04" + rest, some_bytes),
    st.sampled_from([markers.END, markers.REDELIVER_NOW, b"\x05", b"\xff"]),
)
# (key, value, partition, timestamp): None stamps it now; -1 is "no
# timestamp", as old clients write, under which a START's timeout may overflow.
Mark = tuple[bytes | int, bytes | None, int, int | None]
marker_records = st.tuples(
    marker_keys, marker_values, st.integers(0, PARTITIONS - 1), st.sampled_from([None, -1])
)


def letters(topic: str) -> st.SearchStrategy[RawRecord]:
    """DLQ records as a hostile producer (or an old kmqadmin) left them."""
    return queue_records(topic)


def epochs() -> st.SearchStrategy[bytes | None]:
    """scheduler-epoch: due now, soon, never, past year 9999, not a number."""
    return st.one_of(
        st.none(),
        st.binary(max_size=12),
        st.integers(-(2**64), 2**64).map(lambda n: str(n).encode()),
        st.floats(allow_nan=True, allow_infinity=True).map(lambda f: repr(f).encode()),
        st.sampled_from([b"1e15", b"253402300800", b"0", b"-1", b"1.5", b"9" * 40, b"\xd9\xa3"]),
    )


def schedule_records(targets: list[str]) -> st.SearchStrategy[RawRecord]:
    """Schedule versions and tombstones aimed at ``targets`` (existing topics the
    suite watches) or at names that are no topic; some of each header missing."""
    topic = st.one_of(st.sampled_from([t.encode() for t in targets]), some_bytes)
    ours = st.fixed_dictionaries(
        {},
        optional={
            wire.EPOCH.encode(): epochs(),
            wire.TARGET_TOPIC.encode(): st.one_of(st.none(), topic),
            wire.TARGET_KEY.encode(): maybe_bytes,
        },
    ).map(lambda found: list(found.items()))
    return st.builds(
        lambda key, value, mine, others, partition: RawRecord(
            value, key=key, headers=mine + others, partition=partition
        ),
        # Never null: a compacted topic refuses a record without a key.
        st.one_of(some_bytes, st.sampled_from([b"", b"\n", b"a\nb", b"\xff", b"kmq-retry/x"])),
        maybe_bytes,
        ours,
        st.lists(any_header, max_size=4),
        st.integers(0, PARTITIONS - 1),
    )


intents = st.lists(st.sampled_from(["ack", "reject", "drop"]), min_size=1, max_size=4)
