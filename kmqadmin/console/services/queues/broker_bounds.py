"""Whether the broker can serve a share queue as it is about to be saved.

A share queue's timeout becomes its group's lock duration and its
redeliveries must fit under the broker's delivery limit; the broker, not the
registration, decides both bounds. So the check asks the cluster, and is
made where a registration is saved (the registry's and /admin/'s form, the
API's serializer, SQS's SetQueueAttributes), never in the model's own
validation, which must not reach Kafka.
"""

from django.core.exceptions import ValidationError

from kmqadmin.console.models import Queue
from kmqadmin.kafka.admin import share_group_configs as share_group
from kmqadmin.kafka.admin.share_groups import ShareGroupError, broker_limits
from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.errors import KafkaSetupError

TIMEOUT_S = 5.0


def check_share_bounds(queue: Queue) -> None:
    """ValidationError naming the setting when ``queue`` is a share queue
    the broker cannot serve (a timeout outside its lock bounds, more
    redeliveries than its delivery limit). A cluster that does not answer
    is not this check's to report: creating the topics, next, says so."""
    if queue.backend != "share" or queue.cluster_id is None:
        return
    try:
        config = queue.config()
        limits = broker_limits(
            admin_client(config.bootstrap_servers, config.kafka_config), TIMEOUT_S
        )
    except KafkaSetupError:
        return
    try:
        share_group.check(config, limits)
    except ShareGroupError as exc:
        raise ValidationError(str(exc)) from None
