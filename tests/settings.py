"""The product's settings, on a data dir of the suite's own (tests/data_dir.py)."""

# First, out of isort's order: it points KMQ_DATA_DIR at the suite's dir.
from tests import data_dir  # noqa: F401, I001
from kmqadmin.settings import *  # noqa: F403
