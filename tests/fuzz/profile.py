"""The fuzz suite's hypothesis settings: a few fixed examples in `make test`,
KMQ_FUZZ_EXAMPLES random ones in `make chaos`.

Without KMQ_FUZZ_EXAMPLES the examples are derandomized: `make test` sends
the same records every run, so a failure there reproduces by running it
again. Their seed is a digest of the test function's source: an edit to
its body (a diagnostic print included) draws other examples, so reproduce
a failure before changing the test.

Examples share a broker, topics and running services, so they are
not independent and shrinking (each step a broker round trip, replayed on
topics that still hold the earlier records) would mostly burn time: a
failure is reported with its whole example and the URL or service it broke.
"""

import os

from hypothesis import HealthCheck, Phase, settings

LONG = int(os.environ.get("KMQ_FUZZ_EXAMPLES", "0"))

settings.register_profile(
    "kmq-fuzz",
    max_examples=LONG or 6,
    derandomize=not LONG,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    print_blob=True,
)
FUZZ = settings.get_profile("kmq-fuzz")
