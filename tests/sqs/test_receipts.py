"""Receipt handles: what one names comes back; a forged, altered or other
queue's handle is ReceiptHandleIsInvalid."""

import pytest

from kmqadmin.sqs.protocol.errors import SqsError
from kmqadmin.sqs.receiving.receipts import Receipt, read


def test_a_handle_names_its_delivery() -> None:
    receipt = Receipt("orders", 3, 1_234_567_890_123, 2)
    assert read(receipt.handle(), "orders") == receipt


# Made in the test, not at collection: a handle carries the time it was made,
# and every xdist worker must collect the same ids.
HOSTILE = {
    "none": lambda: None,
    "empty": lambda: "",
    "garbage": lambda: "garbage",
    "signature altered": lambda: Receipt("orders", 3, 12, 2).handle()[:-1] + "x",
    "another queue's": lambda: Receipt("payments", 3, 12, 2).handle(),
}


@pytest.mark.parametrize("made", HOSTILE.values(), ids=HOSTILE.keys())
def test_anything_else_is_refused_as_sqs_does(made) -> None:
    with pytest.raises(SqsError) as refused:
        read(made(), "orders")
    assert refused.value.code == "ReceiptHandleIsInvalid"


def test_a_handle_cannot_be_edited_to_name_another_message() -> None:
    handle = Receipt("orders", 3, 12, 2).handle()
    payload, _, rest = handle.partition(":")
    forged = f"{payload[:-1]}{'A' if payload[-1] != 'A' else 'B'}:{rest}"
    with pytest.raises(SqsError):
        read(forged, "orders")
