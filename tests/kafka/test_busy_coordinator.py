"""once_it_answers: pure logic, so a callable stands in for the client."""

import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from kmqadmin.kafka.admin.busy_coordinator import once_it_answers


def _refusing(codes: list[int], answer: str = "offsets"):
    """A call refused with each code in turn, then answered."""
    calls = []

    def call() -> str:
        calls.append(time.monotonic())
        if len(calls) <= len(codes):
            raise KafkaException(KafkaError(codes[len(calls) - 1]))
        return answer

    return call, calls


def test_a_loading_or_moving_coordinator_is_asked_again() -> None:
    busy = [KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.NOT_COORDINATOR]
    call, calls = _refusing(busy)
    assert once_it_answers(call, time.monotonic() + 5) == "offsets"
    assert len(calls) == 3


def test_any_other_error_reaches_the_caller_at_once() -> None:
    call, calls = _refusing([KafkaError.GROUP_AUTHORIZATION_FAILED])
    with pytest.raises(KafkaException) as raised:
        once_it_answers(call, time.monotonic() + 5)
    assert raised.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert len(calls) == 1


def test_a_coordinator_busy_past_the_deadline_is_its_error() -> None:
    call, calls = _refusing([KafkaError.COORDINATOR_NOT_AVAILABLE] * 1000)
    with pytest.raises(KafkaException) as raised:
        once_it_answers(call, time.monotonic() + 0.35)
    assert raised.value.args[0].code() == KafkaError.COORDINATOR_NOT_AVAILABLE
    assert 2 <= len(calls) <= 5
