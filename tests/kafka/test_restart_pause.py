"""The pause before a restart (pure logic)."""

from kmqadmin.kafka.ownership.restart_pause import LONGEST_S, SETTLED_S, RestartPause


def test_quick_failures_double_the_pause_up_to_the_longest() -> None:
    pause = RestartPause()
    assert [pause.after(0.5) for _ in range(7)] == [1, 2, 4, 8, 16, LONGEST_S, LONGEST_S]


def test_a_life_that_settled_starts_the_pauses_over() -> None:
    pause = RestartPause()
    for _ in range(6):
        pause.after(1)
    assert pause.after(SETTLED_S) == 1
    assert pause.after(1) == 2


def test_a_start_that_failed_outright_waits_longer_each_time() -> None:
    pause = RestartPause()
    assert [pause.again() for _ in range(3)] == [1, 2, 4]
    assert pause.after(SETTLED_S + 1) == 1
