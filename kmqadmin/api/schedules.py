"""The REST API for schedules: upcoming list, create, edit, cancel, fire now."""

import time

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.console import audit, clients
from kmqadmin.console.models import ScheduleTopic
from kmqadmin.scheduler import SchedulerConfig, Upcoming

from . import serializers as s
from .paging import LIMIT, page_limit


class SchedulesAPIView(APIView):
    def config(self, topic: str) -> SchedulerConfig:
        return get_object_or_404(
            ScheduleTopic.objects.select_related("cluster"), topic=topic
        ).config()

    def write(self, config: SchedulerConfig, schedule_id: str, data: dict) -> dict:
        """Writes a version of ``schedule_id``; returns what the audit keeps of it."""
        key = data.get("key")
        client = clients.schedule_client(config)
        client.schedule(
            schedule_id,
            data["at"],
            data["target_topic"],
            data["payload"],
            target_key=None if key is None else key.encode(),
            headers=data["headers"],
        )
        client.flush(10)
        return {"at": data["at"].isoformat(), "target_topic": data["target_topic"]}

    def live(self, topic: str, schedule_id: str) -> Upcoming:
        found = clients.upcoming(self.config(topic)).get(schedule_id)
        if found is None:
            raise NotFound(f"no live schedule {schedule_id} on {topic}")
        return found


class ScheduleList(SchedulesAPIView):
    @extend_schema(
        operation_id="schedules_list",
        parameters=[OpenApiParameter("after", str, description="cursor: DUE_MS:ID"), LIMIT],
        responses=s.UpcomingPageSerializer,
    )
    def get(self, request: Request, topic: str) -> Response:
        """Live schedules, soonest first."""
        view = clients.upcoming(self.config(topic))
        limit = page_limit(request)
        page = view.page(limit, _cursor(request.query_params.get("after")))
        cursor = f"{page[-1].due_ms}:{page[-1].id}" if len(page) == limit else None
        return Response(
            {
                "count": view.count(),
                "complete": view.complete,
                "results": [_shown(u) for u in page],
                "next": cursor,
            }
        )

    @extend_schema(request=s.NewScheduleSerializer, responses={201: None})
    def post(self, request: Request, topic: str) -> Response:
        """Creates a schedule (or a new version of the id, if it exists)."""
        config = self.config(topic)
        body = s.NewScheduleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        schedule_id = body.validated_data["id"]
        after = self.write(config, schedule_id, body.validated_data)
        audit.record(request.user, "schedule", f"{topic}/{schedule_id}", after=after)
        return Response(status=status.HTTP_201_CREATED)


class ScheduleDetail(SchedulesAPIView):
    @extend_schema(responses=s.UpcomingSerializer)
    def get(self, request: Request, topic: str, schedule_id: str) -> Response:
        return Response(_shown(self.live(topic, schedule_id)))

    @extend_schema(request=s.ScheduleSerializer, responses={200: None})
    def put(self, request: Request, topic: str, schedule_id: str) -> Response:
        """Writes a new version: the latest version wins."""
        before = _shown(self.live(topic, schedule_id))
        body = s.ScheduleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        after = self.write(self.config(topic), schedule_id, body.validated_data)
        audit.record(request.user, "edit schedule", f"{topic}/{schedule_id}", before, after)
        return Response(status=status.HTTP_200_OK)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, topic: str, schedule_id: str) -> Response:
        """Cancels: a tombstone, so it never fires."""
        before = _shown(self.live(topic, schedule_id))
        client = clients.schedule_client(self.config(topic))
        client.cancel(schedule_id)
        client.flush(10)
        audit.record(request.user, "cancel schedule", f"{topic}/{schedule_id}", before=before)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FireNow(SchedulesAPIView):
    @extend_schema(request=None, responses={200: None})
    def post(self, request: Request, topic: str, schedule_id: str) -> Response:
        """A new version due now, with the payload, key and headers it had."""
        live = self.live(topic, schedule_id)
        config = self.config(topic)
        record = clients.upcoming(config).record(live)
        if record is None:
            raise NotFound(f"schedule {schedule_id}'s record is gone (compacted)")
        client = clients.schedule_client(config)
        client.reschedule(record, at=time.time())
        client.flush(10)
        audit.record(request.user, "fire schedule now", f"{topic}/{schedule_id}", _shown(live))
        return Response(status=status.HTTP_200_OK)


def _shown(upcoming: Upcoming) -> dict:
    return {
        "id": upcoming.id,
        "due_ms": upcoming.due_ms,
        "target_topic": upcoming.target_topic,
        "partition": upcoming.partition,
        "offset": upcoming.offset,
    }


def _cursor(text: str | None) -> tuple[int, str] | None:
    if not text:
        return None
    due, sep, schedule_id = text.partition(":")
    if not sep or not due.isdigit():
        raise ValidationError({"after": "expected DUE_MS:ID, as in a page's next"})
    return int(due), schedule_id
