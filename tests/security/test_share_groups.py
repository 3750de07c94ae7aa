"""Share-group admin calls reach a SASL_SSL cluster with the queue's own
settings (SCRAM-SHA-512, a client certificate)."""

import pytest

from kmqadmin.console.models import Queue
from kmqadmin.kafka.admin.share_groups import ShareGroupAdmin

pytestmark = pytest.mark.django_db


def test_share_group_calls_authenticate_as_the_queue_does(secure_queue: Queue) -> None:
    config = secure_queue.config()
    admin = ShareGroupAdmin(config.bootstrap_servers, config.kafka_config, timeout_s=10)
    try:
        assert not admin.describe(config.group_id).exists
        assert [p.start_offset for p in admin.progress(config.group_id, config.topic)] == [None] * 3
    finally:
        admin.close()
