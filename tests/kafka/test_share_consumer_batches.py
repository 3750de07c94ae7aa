"""The share consumer's pure parts: acknowledgement batching and decoding
record batches, including bytes no well-behaved producer writes."""

import random

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kmqadmin.kafka.share_consumer.batches import Acquired, BatchCache, BatchError, records
from kmqadmin.kafka.share_consumer.leases import ACCEPT, GAP, RELEASE, batches


def test_contiguous_acks_become_one_batch_with_one_type_when_all_agree() -> None:
    acks = [(5, ACCEPT), (3, ACCEPT), (4, ACCEPT), (9, RELEASE), (10, GAP)]
    assert batches(acks) == [(3, 5, [ACCEPT]), (9, 10, [RELEASE, GAP])]


def test_an_offset_acknowledged_twice_counts_once() -> None:
    assert batches([(1, ACCEPT), (1, RELEASE)]) == [(1, 1, [ACCEPT])]


def batch_bytes(base: int, n: int, compression: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(n):
        builder.append(
            i, timestamp=1000 + i, key=b"k%d" % i, value=b"v%d" % i, headers=[("h", b"x")]
        )
    data = bytearray(builder.build())
    data[0:8] = base.to_bytes(8, "big")
    return bytes(data)


@pytest.mark.parametrize("compression", [0, 1])  # none, gzip
def test_only_acquired_records_are_kept_with_their_delivery_count(compression: int) -> None:
    data = batch_bytes(100, 10, compression)
    cache = BatchCache()
    covered: list[tuple[int, int]] = []
    acquired = [Acquired(102, 104, 3), Acquired(108, 108, 1)]
    got = list(records(data, "t", 0, acquired, cache, covered))
    assert covered == [(100, 109)]
    again = list(records(data, "t", 0, [Acquired(109, 109, 2)], cache, []))  # from the cache
    assert [(r.offset(), r.value(), r.delivery_count()) for r in again] == [(109, b"v9", 2)]
    assert [(r.offset(), r.value(), r.delivery_count()) for r in got] == [
        (102, b"v2", 3),
        (103, b"v3", 3),
        (104, b"v4", 3),
        (108, b"v8", 1),
    ]
    assert got[0].headers() == [("h", b"x")] and got[0].timestamp()[1] == 1002


def test_hostile_bytes_raise_batch_error_or_yield_nothing_never_anything_else() -> None:
    good = batch_bytes(0, 5)
    rng = random.Random(7)
    for _ in range(2000):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        cut = data[: rng.randrange(len(data) + 1)]
        try:
            for record in records(bytes(cut), "t", 0, [Acquired(0, 4, 1)], BatchCache(), []):
                assert 0 <= record.offset() <= 4  # only what was acquired
        except BatchError:
            pass
