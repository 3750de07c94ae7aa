"""`kmq cluster add NAME --bootstrap-servers ...` / `kmq cluster list` /
`kmq cluster remove NAME`: the registry's clusters without the console.

``add`` takes the registry form's fields as options and checks them with
that form, then asks the cluster for metadata with its settings (bounded)
before anything is saved: a cluster that is unreachable, refuses the login
or whose secret is missing is one error line and a non-zero exit. Secrets
are named, never given: ``--sasl-password-env VAR`` or ``--sasl-password-file
PATH``, as the registry stores them (``env:VAR``, ``file:PATH``), since a
command line is readable by every user of the machine.
"""

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from kmqadmin.console.forms.registry import ClusterForm, ReferenceInput
from kmqadmin.console.models import Cluster
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.kafka.client.errors import BrokerUnavailable, KafkaSetupError
from kmqadmin.kafka.client.security.access import verify_access

# The cluster `kmq run` registers for the embedded broker, and the demo's.
LOCAL = "local"
# The access check's bound: a cluster across a network, TLS and a login
# included, answers well within it.
CHECK_S = 5.0
# The form's fields that hold where a secret is (env:NAME / file:PATH).
REFERENCES = [name for name, widget in ClusterForm.Meta.widgets.items() if widget is ReferenceInput]
# The options of `add`: the form's fields but the name, a positional.
SETTINGS = ClusterForm.Meta.fields[1:]


def add_arguments(parser: ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="cluster_action", required=True, metavar="action")
    add = actions.add_parser(
        "add", help="Register a cluster once it answers with the given settings."
    )
    add.add_argument("name", help="how the console, the API and KMQ_SQS_CLUSTER name it")
    add.add_argument(
        "--bootstrap-servers", required=True, metavar="HOST:PORT[,...]", help="its brokers"
    )
    for name in SETTINGS:
        if name != "bootstrap_servers":
            _add_option(add, name)
    actions.add_parser("list", help="The registered clusters: name, bootstrap servers, protocol.")
    remove = actions.add_parser(
        "remove", help="Unregister a cluster no queue or schedules topic uses."
    )
    remove.add_argument("name")


def _add_option(parser: ArgumentParser, name: str) -> None:
    """A setting's option; a secret's reference is two, one of which may be given."""
    field = Cluster._meta.get_field(name)
    if name in REFERENCES:
        either = parser.add_mutually_exclusive_group()
        either.add_argument(
            f"{_flag(name)}-env",
            metavar="VAR",
            help=f"the environment variable holding the {field.verbose_name}",
        )
        either.add_argument(
            f"{_flag(name)}-file", metavar="PATH", help=f"a file holding the {field.verbose_name}"
        )
        return
    choices = [value for value, _ in field.choices] if field.choices else None
    parser.add_argument(
        _flag(name),
        metavar=name.rsplit("_", 1)[-1].upper(),  # SERVERS, FILE, URL ...
        choices=choices,
        help=field.help_text or (choices and f"one of {', '.join(choices)}"),
    )


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    action = options["cluster_action"]
    if action == "add":
        cluster = add(_form_data(options))
        command.stdout.write(
            f"registered cluster {cluster.name}: {cluster.bootstrap} ({cluster.security_protocol})"
        )
    elif action == "list":
        rows = [(c.name, c.bootstrap, c.security_protocol) for c in Cluster.objects.all()]
        command.stdout.write(_table([("NAME", "BOOTSTRAP SERVERS", "SECURITY"), *rows]))
    else:
        remove(options["name"])
        command.stdout.write(f"removed cluster {options['name']}")


def _form_data(options: dict[str, Any]) -> dict[str, str]:
    """The form's data from the options: references as the registry keeps
    them, paths absolute (every process reads them, from its own directory)."""
    data = {"name": options["name"]}
    for name in SETTINGS:
        if name in REFERENCES:
            if variable := options[f"{name}_env"]:
                data[name] = f"env:{variable}"
            elif path := options[f"{name}_file"]:
                data[name] = f"file:{Path(path).absolute()}"
        elif (value := options[name]) is not None:
            data[name] = str(Path(value).absolute()) if name.endswith("_file") else value
    return data


def add(data: dict[str, str]) -> Cluster:
    """Validated by the registry's form, checked against the cluster itself,
    then saved and audited as the console's registrations are."""
    form = ClusterForm(data)
    if not form.is_valid():
        problems = "; ".join(
            f"{_option(field)}: {' '.join(errors)}" for field, errors in form.errors.items()
        )
        raise CommandError(f"cluster {data['name']} not saved: {problems}")
    cluster = form.instance
    try:
        security = cluster.security()
        verify_access(cluster.bootstrap, security, security.librdkafka(), timeout=CHECK_S)
        cluster.schema_registry()  # reads its password
    except BrokerUnavailable:
        raise CommandError(
            f"cluster {cluster.name} not saved: no broker at {cluster.bootstrap} answered "
            f"within {CHECK_S:.0f} s; check --bootstrap-servers and that this machine reaches it"
        ) from None
    except KafkaSetupError as exc:
        raise CommandError(f"{exc}; nothing saved") from None
    with audit.action(None, "register cluster", cluster.name, None, dict(form.cleaned_data)):
        return form.save()


def _option(field: str) -> str:
    """How the command line names a form field, for its errors."""
    if field == "name":
        return "NAME"
    if field in REFERENCES:
        return f"{_flag(field)}-env / {_flag(field)}-file"
    return _flag(field) if field in SETTINGS else field


def remove(name: str) -> None:
    """Refused while queues or schedules topics are registered on it, as
    /admin/ refuses (their clusters are protected); audited with what went."""
    cluster = Cluster.objects.filter(name=name).first()
    if cluster is None:
        raise CommandError(f"no cluster {name!r}; `kmq cluster list` shows the registered ones")
    users = [f"queue {q.topic}" for q in cluster.queues.all()]
    users += [f"schedules topic {s.topic}" for s in cluster.schedules.all()]
    if users:
        raise CommandError(
            f"cluster {name} not removed: {', '.join(users)} still use it; unregister them first"
        )
    before = {field: str(getattr(cluster, field)) for field in ClusterForm.Meta.fields}
    with audit.action(None, "remove cluster", name, before):
        cluster.delete()


def local() -> Cluster:
    """The cluster "local", registered once: blank bootstrap servers, so each
    process reaches KAFKA_BOOTSTRAP_SERVERS, which without it is the
    embedded broker on KMQ_EMBEDDED_KAFKA_PORT: a port changed between runs
    needs no change here."""
    return Cluster.objects.get_or_create(name=LOCAL)[0]


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
