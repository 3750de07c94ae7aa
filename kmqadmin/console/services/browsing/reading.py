"""Reading any topic of a registered cluster as a person may see it: a page
of records from a seek with filters, or one record in every rendering that
applies. The console's browser and the API read through here, so both
mask, filter and decode alike: on a topic its queue masks for this person,
the filters see the records masked too, so a filter cannot be used to guess
what the mask hides.

A topic or record that is not there is Http404 (the console's pages and
DRF answer it alike); BadSeek (a start the topic lacks) goes up to the
caller, to answer 400 with its reason."""

from dataclasses import dataclass, replace

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import Http404

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing.masking import topic_masking
from kmqadmin.console.services.browsing.renderings import Rendering, Source, renderings
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.clusters.topic_kinds import kind_of, topic_kinds
from kmqadmin.console.services.roles import role_of
from kmqadmin.kafka.client.errors import TopicMissing
from kmqadmin.kafka.inspect.browse import BrowsedRecord, Caps, Match, Page, Seek, TopicBrowser
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kafka.inspect.record_filter import RecordFilter


@dataclass(frozen=True)
class Shown:
    """One record as its reader may see it."""

    record: BrowsedRecord  # masked when ``masked``
    renderings: list[Rendering]
    masked: bool
    clear: BrowsedRecord  # as written: for the console's actions, never shown masked


def topics(cluster: Cluster) -> list[tuple[str, str]]:
    """The cluster's topics and what each is to us (topic_kinds.py); Kafka's
    internal ones, named __*, left out."""
    kinds = topic_kinds(cluster)
    names = [name for name in _browser(cluster).topics() if not name.startswith("__")]
    return [(name, kinds.get(name, "other")) for name in names]


def partitions(cluster: Cluster, topic: str) -> list[int]:
    try:
        return _browser(cluster).partitions(topic)
    except TopicMissing:
        raise Http404(f"no topic {topic}") from None


def page(
    user: AbstractBaseUser,
    cluster: Cluster,
    topic: str,
    seek: Seek,
    given: RecordFilter,
    caps: Caps,
) -> Page:
    """Up to ``caps.records`` records that ``given`` matches, as ``user`` sees them."""
    masking = topic_masking(role_of(user), cluster, topic)
    found = _browser(cluster).page(topic, seek, _match(given, masking), caps)
    if masking is None:
        return found
    return replace(found, records=[masking.browsed(r) for r in found.records])


def record(
    user: AbstractBaseUser, cluster: Cluster, topic: str, partition: int, offset: int
) -> Shown:
    """The record at ``partition``/``offset``."""
    partitions(cluster, topic)  # a missing topic first: it is not a missing record
    clear = _browser(cluster).record(topic, partition, offset)
    if clear is None:
        raise Http404(f"no record at {topic}/{partition}/{offset}")
    masking = topic_masking(role_of(user), cluster, topic)
    shown = renderings(clear, Source(kind_of(cluster, topic), cluster, masking))
    if masking is None:
        return Shown(clear, shown, False, clear)
    return Shown(masking.browsed(clear), shown, True, clear)


def _browser(cluster: Cluster) -> TopicBrowser:
    return clients.topic_browser(cluster.name, cluster.bootstrap, cluster.kafka_config())


def _match(given: RecordFilter, masking: MaskRules | None) -> Match:
    return given if masking is None or given.empty else masking.matching(given)
