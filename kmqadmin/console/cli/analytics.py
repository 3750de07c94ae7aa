"""`kmq analytics`: the lifecycle analytics of every registered queue.

``--since 1h`` recomputes the hours from an hour ago on and stops;
``--stream`` follows the topics, recomputing what new records touch, and
resumes from its checkpoint when started again.
"""

import re
from argparse import ArgumentParser, ArgumentTypeError
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kmqadmin.console.models import Cluster
from kmqadmin.kafka.client.clock import now_ms

if TYPE_CHECKING:  # the job module starts with PySpark, which every other subcommand would pay for
    from kmqadmin.pipeline.job import RunResult

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"([0-9]+)([smhd])")


def duration_s(text: str) -> int:
    """``90s``, ``30m``, ``1h``, ``7d`` in seconds."""
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise ArgumentTypeError(f"{text!r} is not a duration like 30m, 1h or 7d")
    return int(found[1]) * _UNITS[found[2]]


def add_arguments(parser: ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--since",
        type=duration_s,
        default=duration_s("1h"),
        help="batch run over this window, e.g. 30m, 1h, 7d (default 1h)",
    )
    mode.add_argument("--stream", action="store_true", help="run continuously (Ctrl-C stops)")
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help="streaming checkpoint folder (default $KMQ_ANALYTICS_DIR/checkpoint)",
    )
    parser.add_argument(
        "--every", type=duration_s, default=duration_s("30s"), help="streaming trigger interval"
    )


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    # Imported here: the other subcommands must not pay for starting with PySpark.
    from kmqadmin.console import analytics

    if not Cluster.objects.filter(queues__isnull=False).exists():
        raise CommandError("no queues registered: add one in the console or the API first")

    def report(cluster: Cluster, result: "RunResult") -> None:
        skipped = sum(result.skipped.values())
        command.stdout.write(
            f"{cluster.name}: {result.facts} messages, {len(result.minutes)} minutes"
            f"{f', {skipped} malformed markers or counts records skipped' if skipped else ''}"
        )

    if not options["stream"]:
        for cluster, result in analytics.run_batch(now_ms() - options["since"] * 1000):
            report(cluster, result)
        return
    checkpoint = options["checkpoint"] or Path(settings.KMQ_ANALYTICS_DIR) / "checkpoint"
    trigger = {"processingTime": f"{options['every']} seconds"}
    queries = analytics.run_stream(checkpoint, trigger, report)
    command.stdout.write(f"streaming; checkpoint {checkpoint}")
    try:
        analytics.session().streams.awaitAnyTermination()
    except KeyboardInterrupt:
        pass
    finally:
        for query in queries:
            query.stop()
    failed = [q.exception() for q in queries if q.exception() is not None]
    if failed:
        raise CommandError(f"streaming stopped: {failed[0]}")
