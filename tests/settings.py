"""The product's settings, on a data dir of the suite's own (tests/data_dir.py)."""

# First, out of isort's order: it points KMQ_DATA_DIR at the suite's dir.
from tests import data_dir  # noqa: F401, I001
from kmqadmin.settings import *  # noqa: F403

# The product keeps a connection per thread (kmqadmin/env.py). The suite's
# own process closes them after each use: pytest-django drops the test
# database at the end, which a connection kept by a thread (asgiref's, for a
# Channels consumer) would hold open. The product's processes the suite
# starts keep theirs, as in production.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405

# Alert emails reach django.core.mail.outbox (the test runner swaps every
# mailer for locmem's; the product has none until EMAIL_URL is set).
MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
