"""CallThread: pure logic, so plain callables stand in for librdkafka's calls."""

import threading

import pytest

from kmqadmin.kafka.client.bounded_call import CallThread
from tests.process import wait_for


def test_calls_handed_to_one_thread_run_in_turn_and_end_with_it() -> None:
    calls = CallThread("turns")
    ran: list[int] = []
    first, second = calls.submit(lambda: ran.append(1)), calls.submit(lambda: ran.append(2))
    assert second.wait(5) is None and first.wait(0) is None
    assert ran == [1, 2]
    calls.close(wait_s=5)
    assert "turns" not in _names()


def test_what_the_call_raises_reaches_the_caller() -> None:
    calls = CallThread("raising")
    pending = calls.submit(lambda: int("x"))
    with pytest.raises(ValueError):
        pending.wait(5)
    calls.close(wait_s=5)


def test_a_call_that_never_answers_is_left_on_its_thread_and_holds_up_the_next() -> None:
    calls = CallThread("held")
    answer = threading.Event()
    hung = calls.submit(answer.wait)
    after = calls.submit(lambda: None)
    thread = hung.wait(0.1)
    assert thread is not None and thread.is_alive() and thread.daemon
    assert thread.name == "held"
    assert after.wait(0.1) is thread  # still behind the hung one
    calls.close()  # given up on: its thread ends when the call returns at last
    answer.set()
    thread.join(5)
    assert not thread.is_alive()


def test_an_idle_call_thread_ends_and_the_next_call_starts_it_again() -> None:
    calls = CallThread("resting", idle_s=0.05)
    assert calls.submit(lambda: None).wait(5) is None
    wait_for(lambda: "resting" not in _names(), 5, "the idle thread to end")
    ran: list[int] = []
    assert calls.submit(lambda: ran.append(1)).wait(5) is None
    assert ran == [1]
    calls.close(wait_s=5)
    assert "resting" not in _names()


def _names() -> set[str]:
    return {t.name for t in threading.enumerate()}
