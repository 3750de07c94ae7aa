"""within(): pure logic, so plain callables stand in for librdkafka's calls."""

import threading

import pytest

from kmqadmin.kafka.client.bounded_call import within


def test_a_call_that_returns_in_time_leaves_nothing_running() -> None:
    done = []
    assert within(lambda: done.append(1), 5, "quick") is None
    assert done == [1]


def test_what_the_call_raises_reaches_the_caller() -> None:
    def refuse() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        within(refuse, 5, "refusing")


def test_a_call_that_never_answers_is_left_on_its_thread() -> None:
    answer = threading.Event()
    hung = within(answer.wait, 0.2, "hanging")
    assert hung is not None and hung.is_alive() and hung.daemon
    assert hung.name == "hanging"
    answer.set()  # the call returns at last; its thread ends with it
    hung.join(5)
    assert not hung.is_alive()
