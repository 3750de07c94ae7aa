"""Closes the Kafka clients a queue, schedules topic or cluster had once it
is saved or deleted: the next request builds them from the row as it now is.
A queue's own schedules topic (its backoff's) goes with it."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.console.services.clusters import clients
from kmqadmin.kmq import names


@receiver([post_save, post_delete], sender=Queue)
@receiver([post_save, post_delete], sender=ScheduleTopic)
def close_clients(sender: type, instance: Queue | ScheduleTopic, **kwargs: object) -> None:
    clients.close(instance.topic)
    if isinstance(instance, Queue):
        clients.close(names.schedules_topic(instance.topic))


@receiver([post_save, post_delete], sender=Cluster)
def close_cluster_clients(sender: type, instance: Cluster, **kwargs: object) -> None:
    clients.close(clients.cluster_key(instance.name))
