"""The masking core: what a masked audience gets of a record, and which
rules are refused."""

import json

import pytest
from confluent_kafka import Message

from kmqadmin.kafka.inspect import payload_masking
from kmqadmin.kafka.inspect.browse import BrowsedRecord
from kmqadmin.kafka.inspect.payload_masking import HIDDEN, MAX_TEXT_CHARS, MaskRuleError, MaskRules

SECRET = "4111-1111-1111-1111"


def rules(**given: list[str]) -> MaskRules:
    return MaskRules.build(**given)


def test_every_json_path_match_is_masked_and_the_rest_kept():
    payload = {"card": SECRET, "orders": [{"card": SECRET, "n": 1}], "name": "ada"}
    masked = rules(json_paths=["$..card"]).value(json.dumps(payload).encode())
    assert json.loads(masked) == {"card": "***", "orders": [{"card": "***", "n": 1}], "name": "ada"}


def test_a_match_inside_another_match_is_masked_with_it():
    payload = {"user": {"card": SECRET}}
    masked = rules(json_paths=["$..card", "$.user"]).value(json.dumps(payload).encode())
    assert json.loads(masked) == {"user": "***"}


def test_the_root_matching_masks_the_whole_payload():
    assert rules(json_paths=["$"]).value(b'{"a": 1}') == b'"***"'


def test_patterns_run_after_json_paths_and_over_text_that_is_not_json():
    both = rules(json_paths=["$.card"], patterns=[r"\d{4}-\d{4}"])
    assert json.loads(both.value(b'{"card": "x", "note": "call 1234-5678"}')) == {
        "card": "***",
        "note": "call ***",
    }
    assert rules(patterns=[r"\d{4}-\d{4}"]).value(f"plain {SECRET}".encode()) == b"plain ***-***"


def test_with_json_paths_a_payload_not_json_is_hidden_whole():
    """Protobuf can read as UTF-8 text: a field named by a JSONPath would show."""
    protobuf_like = b"\x00\x00\x00\x00\x07\x00\x0a\x10" + SECRET.encode()
    for payload in (f"plain {SECRET}".encode(), protobuf_like):
        assert rules(json_paths=["$.card"]).value(payload) == HIDDEN


def test_json_framed_for_a_schema_registry_is_masked_after_its_frame():
    frame = b"\x00\x00\x00\x00\x2a"
    masked = rules(json_paths=["$.card"]).value(frame + json.dumps({"card": SECRET}).encode())
    assert masked == frame + b'{"card": "***"}'


def test_a_payload_not_utf8_is_hidden_whole():
    assert rules(headers=["auth"]).value(b"\xff\xfe" + SECRET.encode()) == HIDDEN


def test_a_tombstone_stays_a_tombstone_and_no_rules_change_nothing():
    assert rules(patterns=["x"]).value(None) is None
    assert MaskRules().value(b"\xff") == b"\xff"
    assert MaskRules().empty


def test_headers_are_masked_by_name_whatever_the_case_and_patterns_run_over_the_rest():
    masked = rules(headers=["Authorization"], patterns=[SECRET]).header_values(
        [("authorization", b"Bearer x"), ("note", f"n {SECRET}".encode()), ("empty", None)]
    )
    assert masked == [("authorization", b"***"), ("note", b"n ***"), ("empty", None)]


def test_raw_headers_are_masked_by_their_decoded_names():
    masked = rules(headers=["auth"], patterns=["secret"]).raw_header_values(
        [(b"auth", b"x"), (b"\xffname", b"a secret"), (b"\xffbin", b"\xff")]
    )
    assert masked == [(b"auth", b"***"), (b"\xffname", b"a ***"), (b"\xffbin", HIDDEN)]


def test_patterns_run_over_the_key_and_a_key_not_utf8_is_hidden():
    masking = rules(patterns=[SECRET])
    assert masking.key(f"k-{SECRET}".encode()) == b"k-***"
    assert masking.key(b"\xff") == HIDDEN
    assert rules(json_paths=["$.a"]).key(b"\xff") == b"\xff"  # no pattern reads keys


def test_text_past_the_cap_is_hidden_not_searched():
    masked = rules(patterns=["zz"]).text("a" * MAX_TEXT_CHARS + SECRET)
    assert SECRET not in masked
    assert masked.endswith(f"{len(SECRET)} more characters hidden by masking")


def test_a_record_copy_is_masked_and_the_original_left_clear():
    original = Message(
        topic="q",
        partition=1,
        offset=7,
        key=SECRET.encode(),
        value=json.dumps({"card": SECRET}).encode(),
        headers=[("auth", SECRET.encode())],
        timestamp=(1, 1000),
    )
    masked = rules(json_paths=["$.card"], headers=["auth"], patterns=[SECRET]).record(original)
    assert (masked.topic(), masked.partition(), masked.offset(), masked.timestamp()) == (
        "q",
        1,
        7,
        (1, 1000),
    )
    assert SECRET.encode() not in masked.key() + masked.value() + masked.headers()[0][1]
    assert original.value() == json.dumps({"card": SECRET}).encode()


def test_a_browsed_record_is_masked():
    record = BrowsedRecord("q", 0, 1, 0, b"k", SECRET.encode(), [("h", SECRET.encode())])
    masked = rules(patterns=[SECRET]).browsed(record)
    assert (masked.value, masked.headers) == (b"***", [("h", b"***")])


def test_a_decoded_document_is_copied_when_masked():
    document = {"card": SECRET}
    assert rules(json_paths=["$.card"]).document(document) == {"card": "***"}
    assert document == {"card": SECRET}


@pytest.mark.parametrize(
    ("given", "part", "named"),
    [
        ({"json_paths": ["$.a", "$[?"]}, "json_paths", "$[?"),
        ({"patterns": ["(unclosed"]}, "patterns", "(unclosed"),
        ({"patterns": ["(a+)+b"]}, "patterns", "(a+)+b"),
        ({"patterns": [r"(\w*)*"]}, "patterns", r"(\w*)*"),
        ({"patterns": ["x" * 201]}, "patterns", "xxxx"),
        ({"patterns": ["a*"]}, "patterns", "a*"),
    ],
)
def test_a_rule_that_cannot_be_used_is_refused_naming_it(given, part, named):
    with pytest.raises(MaskRuleError) as refused:
        MaskRules.build(**given)
    assert refused.value.part == part
    assert named in str(refused.value)


def test_masking_a_page_compiles_no_rule_again(monkeypatch: pytest.MonkeyPatch):
    """The rules are compiled once, when built: a page of a hundred records
    costs no compilation (how long it takes is for a benchmark to say)."""
    masking = rules(json_paths=["$..card", "$.user.email"], headers=["auth"], patterns=[r"\d{16}"])
    compiled: list[object] = []
    for library in (payload_masking.jsonpath, payload_masking.re):
        monkeypatch.setattr(library, "compile", lambda *args, **kw: compiled.append(args))
    payload = json.dumps({"user": {"email": "a@b", "card": SECRET}, "items": list(range(50))})
    for _ in range(100):
        masked = json.loads(masking.value(payload.encode()))
        headers = masking.header_values([("auth", b"x"), ("trace", b"y")])
    assert compiled == []
    assert masked["user"] == {"email": "***", "card": "***"}
    assert dict(headers)["trace"] == b"y" and dict(headers)["auth"] != b"x"
