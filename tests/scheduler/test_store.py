"""ScheduleStore against a plain dict model (pure logic, no broker)."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kmqadmin.scheduler.store import ScheduleStore, key_hash

keys = st.integers(0, 40)
deadlines = st.integers(0, 100_000)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), keys, deadlines),
        st.tuples(st.just("remove"), keys, st.just(0)),
        st.tuples(st.just("pop"), st.just(0), deadlines),
    ),
    max_size=300,
)


def k(n: int) -> tuple[int, int]:
    return key_hash(str(n).encode())


@settings(max_examples=300)
@given(ops)
def test_store_matches_a_dict(operations: list[tuple[str, int, int]]) -> None:
    store, model = ScheduleStore(bucket_ms=1000), {}
    for offset, (op, key, value) in enumerate(operations, 1):
        if op == "put":
            store.put(*k(key), value, offset)
            model[k(key)] = (value, offset)
        elif op == "remove":
            assert store.remove(*k(key)) == (model.pop(k(key), None) is not None)
        else:
            popped = store.pop_due(value, 1000)
            expected = sorted((d, o, *h) for h, (d, o) in model.items() if d <= value)
            assert [p[0] for p in popped] == [e[0] for e in expected]
            assert sorted(popped) == expected
            for _, _, hi, lo in popped:
                del model[(hi, lo)]
        assert len(store) == len(model)
        for h, entry in model.items():
            assert store.get(*h) == entry
    assert sorted(store.entries()) == sorted(model.values())


def test_pop_due_is_in_deadline_order_across_buckets_and_respects_limit() -> None:
    store = ScheduleStore(bucket_ms=100)
    rng = random.Random(1)
    wanted = [rng.randrange(0, 10_000) for _ in range(5000)]
    for i, deadline in enumerate(wanted):
        store.put(*k(i), deadline, i)
    out = []
    while batch := store.pop_due(10_000, 7):
        assert len(batch) <= 7
        out.extend(d for d, *_ in batch)
    assert out == sorted(wanted)
    assert len(store) == 0 and store.next_deadline() is None


def test_late_insert_into_an_armed_bucket_still_fires_in_order() -> None:
    store = ScheduleStore(bucket_ms=1000)
    store.put(*k(1), 500, 1)
    store.put(*k(2), 900, 2)
    assert [d for d, *_ in store.pop_due(600, 10)] == [500]
    store.put(*k(3), 700, 3)  # its bucket is armed already
    assert store.next_deadline() == 700
    assert [d for d, *_ in store.pop_due(1000, 10)] == [700, 900]


def test_memory_per_schedule_stays_under_64_bytes() -> None:
    store = ScheduleStore()
    n = 200_000
    for i in range(n):
        store.put(*k(i), 1_000_000 + i * 7, i)
    assert store.memory_bytes() / n <= 64
