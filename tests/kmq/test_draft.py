"""A hand-written message checked before any Kafka call (kmq.draft): no broker needed."""

import base64

import pytest

from kmqadmin.kmq.draft import (
    Draft,
    NotEditable,
    TooLarge,
    as_text,
    changes,
    check_size,
    decode_value,
    draft,
    header_rows,
    of_record,
)
from kmqadmin.kmq.given_headers import BadInput


@pytest.mark.parametrize(
    ("text", "encoding", "value"),
    [
        ("héllo", "utf-8", "héllo".encode()),
        ('{"a": [1, 2]}', "json", b'{"a": [1, 2]}'),  # sent as written, not re-serialised
        (base64.b64encode(b"\x00\xff").decode(), "base64", b"\x00\xff"),
        ("", "utf-8", b""),
    ],
)
def test_a_value_decodes_from_each_form(text: str, encoding: str, value: bytes) -> None:
    assert decode_value(text, encoding) == value


@pytest.mark.parametrize(
    ("text", "encoding", "reason"),
    [
        ('{"a": ', "json", "not JSON"),
        ("[" * 100_000 + "]" * 100_000, "json", "not JSON"),
        ("not base64!", "base64", "not base64"),
        ("ñññ=", "base64", "not base64"),
        ("\ud800", "utf-8", "not UTF-8"),
        ("x", "rot13", "not an encoding"),
    ],
)
def test_a_bad_value_says_why(text: str, encoding: str, reason: str) -> None:
    with pytest.raises(BadInput, match=reason):
        decode_value(text, encoding)


def test_header_rows_skip_blanks_and_refuse_a_name_twice() -> None:
    assert header_rows(["a", "", "b"], ["1", "", "2"]) == {"a": "1", "b": "2"}
    with pytest.raises(BadInput, match="given twice"):
        header_rows(["a", "a"], ["1", "2"])
    with pytest.raises(BadInput, match="name and a value"):
        header_rows(["a"], [])


def test_a_draft_refuses_kmqadmins_own_headers_and_a_bad_key() -> None:
    with pytest.raises(BadInput, match="kmqadmin's own"):
        draft("x", headers={"kmq-id": "t/0/0"})
    with pytest.raises(BadInput, match="NUL"):
        draft("x", key="a\0b")
    made = draft("x", key="k", headers={"h": "v"}, partition=2)
    assert made == Draft(b"x", b"k", (("h", b"v"),), 2)


def test_caps_name_the_size_and_the_limit() -> None:
    made = draft("x" * 10, key="kk", headers={"h": "v"})
    check_size(made, payload_cap=10, record_cap=14)
    with pytest.raises(TooLarge, match="value is 10 bytes; at most 9"):
        check_size(made, payload_cap=9, record_cap=100)
    with pytest.raises(TooLarge, match=r"record is 14 bytes .* at most 13"):
        check_size(made, payload_cap=10, record_cap=13)


def test_a_record_edits_without_kmqs_bookkeeping_and_goes_back_onto_its_copy() -> None:
    record = of_record(b"k", b"\xff", [("kmq-id", b"t/0/1"), ("kmq-dlq-reason", b"x"), ("h", None)])
    assert record == Draft(b"\xff", b"k", (("h", b""),))
    assert as_text(record) == {
        "value": "/w==",
        "encoding": "base64",
        "key": "k",
        "headers": {"h": ""},
        "partition": None,
    }
    edited = draft("new", key="k", headers={"g": "1"})
    assert edited.onto([("kmq-id", b"t/0/1"), ("h", b"old")]) == [
        ("kmq-id", b"t/0/1"),
        ("g", b"1"),
    ]


def test_changes_show_only_what_differs() -> None:
    before = draft("old", key="k", headers={"h": "1", "same": "s"})
    after = draft("new", key="k", headers={"g": "2", "same": "s"})
    assert changes(before, after) == (
        {"header g": None, "header h": "1", "value": "old"},
        {"header g": "2", "header h": None, "value": "new"},
    )
    long = draft("y" * 500)
    assert changes(before, long)[1]["value"].startswith("500 bytes: yyy")
    assert changes(draft("a"), draft("a")) == ({}, {})


@pytest.mark.parametrize(
    ("key", "headers", "what"),
    [(b"\xffkey", [], "its key"), (b"k", [("trace", b"\xfe")], "header trace")],
)
def test_a_record_a_form_would_change_is_not_editable(key, headers, what) -> None:
    with pytest.raises(NotEditable, match=f"{what} is not UTF-8 text"):
        of_record(key, b"value", headers)
