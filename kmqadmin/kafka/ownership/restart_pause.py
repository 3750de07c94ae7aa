"""How long to wait before starting again something that stopped on its own.

The services (tracker, scheduler, demo traffic) restart a life that crashed,
and `kmq run` restarts a child that exited, both after this pause: 1 s,
doubling to 30 s, so that what cannot start does not spin. A life that ran a
minute was not failing to start: the outage it ended on is a new one, and the
next pause is the first again. Without that reset a service that had lived
through a few broker restarts in a week would wait the longest pause after
every later blip.
"""

from dataclasses import dataclass

FIRST_S = 1.0
LONGEST_S = 30.0
# A life that ran this long before it ended starts again after the first pause.
SETTLED_S = 60.0


@dataclass
class RestartPause:
    seconds: float = 0.0

    def after(self, ran_s: float) -> float:
        """The pause before the next life, given how long the last one ran."""
        settled = ran_s >= SETTLED_S or not self.seconds
        self.seconds = FIRST_S if settled else min(self.seconds * 2, LONGEST_S)
        return self.seconds

    def again(self) -> float:
        """The pause after a start that failed outright: the next, longer one."""
        self.seconds = min(self.seconds * 2, LONGEST_S) if self.seconds else FIRST_S
        return self.seconds
