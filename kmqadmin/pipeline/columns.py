"""The per-minute analytics columns, named once.

The pipeline computes them, the console stores them (LifecycleMinute) and
charts them. This module imports no PySpark, so the console's views can name
the columns without starting a JVM.
"""

COUNTS = ("produced", "acked", "redelivered", "dead_lettered")
QUANTILES = (0.5, 0.95, 0.99)
# What a quantile is taken of: the ack against its message's first copy
# (end-to-end latency), and against its copy's latest start (processing).
QUANTILE_KINDS = ("latency", "processing")


def percent(q: float) -> str:
    """A quantile as the column names write it: 0.95 -> "95"."""
    return f"{q * 100:g}"


def quantile_column(kind: str, q: float) -> str:
    return f"{kind}_p{percent(q)}_ms"


QUANTILE_COLUMNS = tuple(quantile_column(kind, q) for kind in QUANTILE_KINDS for q in QUANTILES)
# A minute row's measures, in the order the pipeline writes them.
MINUTE_COLUMNS = (*COUNTS, *QUANTILE_COLUMNS)
