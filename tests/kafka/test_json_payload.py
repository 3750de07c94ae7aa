"""Untrusted JSON: every failure a ValueError, none a RecursionError."""

import pytest

from kmqadmin.kafka.client import json_payload

TOO_DEEP = "[" * 100_000  # past json's C scanner and Python's stack alike


def test_nesting_past_the_stack_is_a_value_error_not_a_recursion_error() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        json_payload.loads(TOO_DEEP)
    with pytest.raises(ValueError):
        json_payload.loads(b"\xff")  # not UTF-8
    document: list = []
    for _ in range(100_000):
        document = [document]
    with pytest.raises(ValueError, match="too deeply to print"):
        json_payload.pretty(document)


def test_what_parses_prints_indented_with_its_characters() -> None:
    assert json_payload.pretty(json_payload.loads('{"a": ["é"]}')) == '{\n  "a": [\n    "é"\n  ]\n}'
