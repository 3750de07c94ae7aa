"""LetterFilter: its JSON form round-trips (pure logic)."""

from hypothesis import given
from hypothesis import strategies as st

from kmqadmin.kmq import LetterFilter

text = st.text(min_size=1).map(str.encode) | st.none()


@given(
    key=text,
    reason=text,
    contains=text,
    header=st.tuples(st.text(min_size=1), st.text().map(str.encode)) | st.none(),
    since_ms=st.integers(min_value=0, max_value=2**62) | st.none(),
    until_ms=st.integers(min_value=0, max_value=2**62) | st.none(),
)
def test_json_round_trip(key, reason, contains, header, since_ms, until_ms) -> None:
    wanted = LetterFilter(key, reason, header, contains, since_ms, until_ms)
    assert LetterFilter.from_json(wanted.to_json()) == wanted
