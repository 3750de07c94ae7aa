"""The REST API for schedules: upcoming list, create, edit, cancel, fire now.

Every body is built by the serializer the view's schema names.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.api.paging import LIMIT, page_after, page_limit
from kmqadmin.api.serializers.schedules import (
    NewScheduleSerializer,
    ScheduleSerializer,
    UpcomingPageSerializer,
    UpcomingSerializer,
)
from kmqadmin.api.views.registrations import CLUSTER, registration
from kmqadmin.console.models import ScheduleTopic
from kmqadmin.console.services import cursors
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.schedules import (
    cancel_schedule,
    fire_schedule,
    live_schedule,
    write_schedule,
)


@extend_schema(parameters=[CLUSTER])
class SchedulesAPIView(APIView):
    """A view under /schedules/{topic}/: the topic must be registered."""

    def topic(self, topic: str) -> ScheduleTopic:
        return registration(self.request, ScheduleTopic, topic)


class ScheduleList(SchedulesAPIView):
    @extend_schema(
        operation_id="schedules_list",
        parameters=[OpenApiParameter("after", str, description="cursor: DUE_MS:ID"), LIMIT],
        responses=UpcomingPageSerializer,
    )
    def get(self, request: Request, topic: str) -> Response:
        """Live schedules, soonest first."""
        view = clients.upcoming(self.topic(topic).config())
        limit = page_limit(request)
        page = view.page(limit, page_after(request, cursors.schedule_after))
        cursor = cursors.schedule_cursor(page[-1]) if len(page) == limit else None
        body = {"count": view.count(), "complete": view.complete, "results": page, "next": cursor}
        return Response(UpcomingPageSerializer(body).data)

    @extend_schema(request=NewScheduleSerializer, responses={201: None})
    def post(self, request: Request, topic: str) -> Response:
        """Creates a schedule (or a new version of the id, if it exists)."""
        schedules = self.topic(topic)
        body = NewScheduleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        write_schedule(request.user, schedules, data["id"].encode(), data, edit=False)
        return Response(status=status.HTTP_201_CREATED)


class ScheduleDetail(SchedulesAPIView):
    @extend_schema(responses=UpcomingSerializer)
    def get(self, request: Request, topic: str, schedule_id: str) -> Response:
        live = live_schedule(self.topic(topic), schedule_id)
        return Response(UpcomingSerializer(live).data)

    @extend_schema(request=ScheduleSerializer, responses={200: None})
    def put(self, request: Request, topic: str, schedule_id: str) -> Response:
        """Writes a new version: the latest version wins."""
        schedules = self.topic(topic)
        live = live_schedule(schedules, schedule_id)  # 404 before a 400
        body = ScheduleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        write_schedule(request.user, schedules, live.key, body.validated_data, edit=True)
        return Response(status=status.HTTP_200_OK)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, topic: str, schedule_id: str) -> Response:
        """Cancels: a tombstone, so it never fires."""
        cancel_schedule(request.user, self.topic(topic), schedule_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FireNow(SchedulesAPIView):
    @extend_schema(request=None, responses={200: None})
    def post(self, request: Request, topic: str, schedule_id: str) -> Response:
        """A new version due now, with the payload, key and headers it had."""
        fire_schedule(request.user, self.topic(topic), schedule_id)
        return Response(status=status.HTTP_200_OK)
