"""A background job: started, and how far it is."""

from rest_framework import serializers


class TaskStartedSerializer(serializers.Serializer):
    task = serializers.CharField()
    status_url = serializers.CharField()


class TaskStatusSerializer(serializers.Serializer):
    state = serializers.CharField(help_text="PENDING, STARTED, PROGRESS, SUCCESS or FAILURE")
    progress = serializers.DictField(allow_null=True, help_text="counts and fraction done")
