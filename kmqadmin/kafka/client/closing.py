"""Clients that are their own context manager: ``with`` closes them."""

from typing import Self


class Closing:
    """``with client:`` closes the client however the block ends, so a worker
    that raises still leaves its group and flushes what it wrote."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
