"""An owner's transaction never outlives the group's session timeout."""

import pytest

from kmqadmin.kafka.client.config import owner_transaction_timeout_ms


def test_it_is_the_session_timeout_unless_set_lower() -> None:
    assert owner_transaction_timeout_ms() == 6000
    assert owner_transaction_timeout_ms({"session.timeout.ms": 10_000}) == 10_000
    assert owner_transaction_timeout_ms({"transaction.timeout.ms": 4000}) == 4000


def test_a_longer_one_is_refused_naming_both_settings() -> None:
    with pytest.raises(
        ValueError, match=r"transaction.timeout.ms \(60000\).*session.timeout.ms \(6000\)"
    ):
        owner_transaction_timeout_ms({"transaction.timeout.ms": 60_000})
