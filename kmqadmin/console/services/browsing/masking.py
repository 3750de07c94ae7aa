"""Who sees a queue's records masked, and which topics its rules cover.

Viewers always see masked data when the queue has rules; operators when the
queue says "mask for operators too"; admins see clear text. Every surface
that shows records (pages, fragments, live feeds, the API) asks
``masking_for`` and hands the rules (or None: clear) to the service that
reads the records, so one place decides for all of them.
"""

from dataclasses import dataclass, field, fields

from confluent_kafka import Message as KafkaMessage
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.kafka.inspect.payload_masking import MaskRuleError, MaskRules
from kmqadmin.kmq import LetterFilter, names

# What a masked audience sees of a queue whose rules do not compile: nothing.
HIDE_ALL = MaskRules.build(json_paths=["$"], patterns=[r"[\s\S]+"])
MASKING_FIELDS = ["mask_json_paths", "mask_headers", "mask_patterns", "mask_operators"]
# Why an edit of a masked record is refused rather than pre-filled.
NO_MASKED_EDITS = (
    "this queue masks its records for your role: an edit of masked data would write the mask "
    "(***) over the real values"
)


def masking_for_role(role: Role, queue: Queue) -> MaskRules | None:
    if role >= Role.ADMIN:
        return None
    try:
        rules = queue.masking()
    except MaskRuleError:  # saved around the form's and the API's checks: fail closed
        rules = HIDE_ALL
    if rules.empty:
        return None
    if role >= Role.OPERATOR and not queue.mask_operators:
        return None
    return rules


def masking_for(user: AbstractBaseUser | AnonymousUser, queue: Queue) -> MaskRules | None:
    """The rules this person's view of the queue applies; None: clear text."""
    return masking_for_role(role_of(user), queue)


def topic_masking(role: Role, cluster: Cluster, topic: str) -> MaskRules | None:
    """For the browser: the rules of the queue whose records ``topic`` holds:
    the queue topic, its DLQ, or its backoff schedules (delayed copies)."""
    for queue in cluster.queues.all():
        if topic in (queue.topic, queue.dlq_topic, names.schedules_topic(queue.topic)):
            return masking_for_role(role, queue)
    return None


@dataclass(frozen=True)
class _MaskedLetterFilter(LetterFilter):
    masking: MaskRules = field(default_factory=MaskRules)

    def __call__(self, record: KafkaMessage) -> bool:
        return super().__call__(self.masking.record(record))


def masked_letter_filter(match: LetterFilter, masking: MaskRules | None) -> LetterFilter:
    """The DLQ filter as a masked audience may use it: on the masked letters,
    so that a filter cannot tell it what the mask hides."""
    if masking is None:
        return match
    given = {f.name: getattr(match, f.name) for f in fields(match)}
    return _MaskedLetterFilter(**given, masking=masking)
