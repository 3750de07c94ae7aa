"""Configuration the console keeps in SQL; queue *state* lives only in Kafka."""

import functools
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
from django.utils import timezone

from kmqadmin.console.printable import printable, printable_json
from kmqadmin.console.services.alerts import rules as alert_rules
from kmqadmin.console.validators import queue_topic_name, topic_name, topic_names
from kmqadmin.kafka.admin import share_group_configs as share_group
from kmqadmin.kafka.admin.share_groups import ShareGroupError, broker_limits
from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kafka.client.security.access import verify_access
from kmqadmin.kafka.client.security.cluster import (
    MECHANISMS,
    PROTOCOLS,
    REFERENCE_HELP,
    ClusterSecurity,
    read_secret,
    reference_problem,
)
from kmqadmin.kafka.client.security.masking import Masked
from kmqadmin.kafka.inspect.payload_masking import MAX_PATTERN_CHARS, MaskRuleError, MaskRules
from kmqadmin.kafka.inspect.schema_decoding import RegistrySettings
from kmqadmin.kmq import Backoff, QueueConfig, names
from kmqadmin.scheduler import SchedulerConfig


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


def _reference(help_text: str) -> models.CharField:
    """Where a secret is (env:NAME or file:PATH): the secret itself is never
    stored, so no dump, backup, audit entry or form can show it."""
    return models.CharField(max_length=500, blank=True, help_text=f"{help_text}: {REFERENCE_HELP}.")


def _pem_file(help_text: str) -> models.CharField:
    return models.CharField(max_length=500, blank=True, help_text=f"{help_text} (PEM file path).")


class Cluster(models.Model):
    """A Kafka cluster; blank bootstrap servers mean KAFKA_BOOTSTRAP_SERVERS."""

    name = models.SlugField(unique=True)
    bootstrap_servers = models.CharField(
        max_length=500, blank=True, help_text="Blank: use KAFKA_BOOTSTRAP_SERVERS."
    )
    security_protocol = models.CharField(
        max_length=16, choices=_choices(PROTOCOLS), default="PLAINTEXT"
    )
    sasl_mechanism = models.CharField(max_length=16, choices=_choices(MECHANISMS), blank=True)
    sasl_username = models.CharField(max_length=255, blank=True)
    sasl_password = _reference("SASL password")
    oauth_token_endpoint = models.URLField(
        max_length=500, blank=True, help_text="OAUTHBEARER: the OIDC token endpoint."
    )
    oauth_client_id = models.CharField(max_length=255, blank=True)
    oauth_client_secret = _reference("OAUTHBEARER client secret")
    oauth_scope = models.CharField(max_length=255, blank=True)
    ssl_ca_file = _pem_file("CA certificates the brokers' certificates are checked against")
    ssl_cert_file = _pem_file("Client certificate, for brokers that require one")
    ssl_key_file = _pem_file("The client certificate's private key")
    ssl_key_password = _reference("Password of an encrypted private key")
    schema_registry_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="A schema registry's Confluent-compatible API, to show Avro, Protobuf and "
        "JSON Schema payloads decoded (e.g. http://registry:8081).",
    )
    schema_registry_username = models.CharField(
        max_length=255, blank=True, help_text="Basic auth user, if the registry wants one."
    )
    schema_registry_password = _reference("The schema registry user's password")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_servers or settings.KAFKA_BOOTSTRAP_SERVERS

    def security(self) -> ClusterSecurity:
        fields = {name: getattr(self, name) for name in SECURITY_FIELDS}
        return ClusterSecurity(cluster=self.name, **fields)

    def clean(self) -> None:
        if problems := self.security().problems() | self._registry_problems():
            raise ValidationError(problems)

    def _registry_problems(self) -> dict[str, str]:
        found = {}
        if bool(self.schema_registry_username) != bool(self.schema_registry_password):
            found["schema_registry_password"] = "a registry user and its password go together"
        if self.schema_registry_password and (
            problem := reference_problem(self.schema_registry_password)
        ):
            found["schema_registry_password"] = problem
        return found

    def schema_registry(self) -> RegistrySettings | None:
        """Where this cluster's producers register their schemas, the password
        read now (ClusterSettingError if it cannot be); None without a registry."""
        if not self.schema_registry_url:
            return None
        password = self.schema_registry_password and read_secret(
            self.name, "schema_registry_password", self.schema_registry_password
        )
        return RegistrySettings(self.schema_registry_url, self.schema_registry_username, password)

    def kafka_config(self) -> Masked:
        """Client settings for this cluster, secrets read now; the first time
        a secured cluster is used, a bounded login check, so a wrong
        password is one error naming the setting, not librdkafka's retries."""
        found = self.security()
        config = found.librdkafka()
        if found.security_protocol != "PLAINTEXT":
            verify_access(self.bootstrap, found, config, timeout=ACCESS_CHECK_S)
        return config


# The login check's bound: a refused login or handshake comes back well
# within it, and a cluster that does not answer is a 503 within a page's 3 s.
ACCESS_CHECK_S = 2.0

SECURITY_FIELDS = [
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "sasl_password",
    "oauth_token_endpoint",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_scope",
    "ssl_ca_file",
    "ssl_cert_file",
    "ssl_key_file",
    "ssl_key_password",
]

SCHEMA_REGISTRY_FIELDS = [
    "schema_registry_url",
    "schema_registry_username",
    "schema_registry_password",
]


class Queue(models.Model):
    """A queue topic with its markers and DLQ topics (kmq's names unless overridden)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="queues")
    topic = models.CharField(max_length=names.MAX_TOPIC_LENGTH, validators=[queue_topic_name])
    group_id = models.CharField(max_length=255)
    backend = models.CharField(
        max_length=5,
        choices=[("kmq", "kmq markers and tracker"), ("share", "Kafka share group (KIP-932)")],
        default="kmq",
        help_text="Who tracks deliveries; not switchable while messages are in flight.",
    )
    marker_format = models.CharField(
        max_length=7,
        choices=[
            ("compact", "compact: a start and an end record per batch"),
            ("kmq", "kmq: SoftwareMill kmq's records, one start and one end per message"),
        ],
        default="compact",
        help_text="How kmq-backend clients write markers; trackers and views read both, so it "
        "may be switched at any time. kmq: for a queue shared with kmq's Java clients.",
    )
    partitions = models.PositiveSmallIntegerField(
        default=6,
        validators=[MinValueValidator(1)],
        help_text="Used when kmqadmin creates the topics.",
    )
    message_timeout_ms = models.PositiveIntegerField(
        default=30_000, validators=[MinValueValidator(1)]
    )
    max_redeliveries = models.PositiveSmallIntegerField(
        default=3, help_text="0: a message that times out goes to the DLQ."
    )
    markers_topic_override = models.CharField(
        max_length=names.MAX_TOPIC_LENGTH, blank=True, validators=[topic_name]
    )
    dlq_topic_override = models.CharField(
        max_length=names.MAX_TOPIC_LENGTH, blank=True, validators=[topic_name]
    )
    backoff_initial_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Blank: redeliver at once; else delay retries by this.",
    )
    backoff_multiplier = models.FloatField(default=2.0, validators=[MinValueValidator(1.0)])
    backoff_max_ms = models.PositiveIntegerField(
        default=3_600_000, validators=[MinValueValidator(1)]
    )
    delayed_sends = models.BooleanField(
        default=False,
        help_text="Messages may be sent for later (the SQS endpoint's DelaySeconds): the queue "
        "gets a schedules topic and a scheduler, as a backoff does.",
    )
    mask_json_paths = models.TextField(
        blank=True,
        help_text="Masking: JSONPath expressions, one a line; what each selects in a JSON "
        "payload shows as *** (e.g. $..card_number).",
    )
    mask_headers = models.TextField(
        blank=True, help_text="Masking: header names, one a line; their values show as ***."
    )
    mask_patterns = models.TextField(
        blank=True,
        help_text="Masking: regular expressions, one a line, run over payload, key and header "
        f"text; what they match shows as ***. At most {MAX_PATTERN_CHARS} characters each.",
    )
    mask_operators = models.BooleanField(
        default=False,
        help_text="Mask for operators too (viewers always see masked data when rules exist; "
        "admins see clear text).",
    )

    class Meta:
        ordering = ["cluster__name", "topic"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "topic"], name="unique_queue_topic")
        ]

    def __str__(self) -> str:
        return self.topic

    @property
    def markers_topic(self) -> str:
        return self.markers_topic_override or names.markers_topic(self.topic)

    @property
    def dlq_topic(self) -> str:
        return self.dlq_topic_override or names.dlq_topic(self.topic)

    @property
    def backoff(self) -> Backoff | None:
        if self.backoff_initial_ms is None:
            return None
        return Backoff(self.backoff_initial_ms, self.backoff_multiplier, self.backoff_max_ms)

    def masking(self) -> MaskRules:
        """The masking rules, compiled once per distinct set of rules."""
        return _mask_rules(self.mask_json_paths, self.mask_headers, self.mask_patterns)

    def clean(self) -> None:
        """The queue core's own rules (QueueConfig, Backoff): a queue saved
        here is one the dashboard and the workers can run. A share queue has
        no markers topic, so an override of its name is refused, not kept
        unused: the person setting it thinks it does something. A masking
        rule that does not compile is refused under its field, naming it."""
        try:
            self.masking()
        except MaskRuleError as exc:
            raise ValidationError({f"mask_{exc.part}": str(exc)}) from None
        if self.backend == "share" and self.markers_topic_override:
            raise ValidationError(
                {"markers_topic_override": "a share queue has no markers topic: leave it blank"}
            )
        numbers = (self.message_timeout_ms, self.max_redeliveries, self.backoff_multiplier)
        if None not in numbers and self.backoff_max_ms is not None:
            try:
                self._config(bootstrap_servers="")
            except ValueError as exc:
                raise ValidationError(str(exc)) from None
            if self.backend == "share" and self.cluster_id is not None:
                self._check_share_limits()

    def _check_share_limits(self) -> None:
        """A share queue the broker cannot serve (a timeout outside its lock
        bounds, more redeliveries than its delivery limit) is refused here,
        naming the setting. A cluster that does not answer is not this
        check's to report: creating the topics, next, says so."""
        config = self.config()
        try:
            limits = broker_limits(admin_client(config.bootstrap_servers, config.kafka_config), 5.0)
        except KafkaSetupError:
            return
        try:
            share_group.check(config, limits)
        except ShareGroupError as exc:
            raise ValidationError(str(exc)) from None

    def config(self) -> QueueConfig:
        """What the queue core needs to serve this queue."""
        return self._config(self.cluster.bootstrap)

    def _config(self, bootstrap_servers: str) -> QueueConfig:
        return QueueConfig(
            bootstrap_servers=bootstrap_servers,
            topic=self.topic,
            group_id=self.group_id,
            markers_topic=self.markers_topic,
            dlq_topic=self.dlq_topic,
            message_timeout_ms=self.message_timeout_ms,
            max_redeliveries=self.max_redeliveries,
            backoff=self.backoff,
            delayed_sends=self.delayed_sends,
            kafka_config=self.cluster.kafka_config(),
            backend=self.backend,
            marker_format=self.marker_format,
        )


class ScheduleTopic(models.Model):
    """A schedules topic of its own (etf1's), served by the workers' schedulers.

    A queue with a backoff has one too; it is derived from the queue, not
    registered here.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="schedules")
    topic = models.CharField(max_length=names.MAX_TOPIC_LENGTH, validators=[topic_name])
    group_id = models.CharField(max_length=255)
    partitions = models.PositiveSmallIntegerField(
        default=6,
        validators=[MinValueValidator(1)],
        help_text="Used when kmqadmin creates the topic.",
    )
    allowed_targets = models.JSONField(
        default=list,
        blank=True,
        validators=[topic_names],
        help_text="Topics its schedules may fire into; empty: any topic.",
    )

    class Meta:
        ordering = ["cluster__name", "topic"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "topic"], name="unique_schedules_topic")
        ]

    def __str__(self) -> str:
        return self.topic

    def config(self) -> SchedulerConfig:
        return SchedulerConfig(
            bootstrap_servers=self.cluster.bootstrap,
            topic=self.topic,
            group_id=self.group_id,
            kafka_config=self.cluster.kafka_config(),
            allowed_targets=frozenset(self.allowed_targets),
        )


class AppendOnly(Exception):
    """An audit entry may be added, and its outcome set once; nothing else."""


class AuditQuerySet(models.QuerySet):
    """Refuses bulk changes: no UI, API or admin action rewrites the log.

    (A deleted user's entries keep their username: Django nulls ``user``
    through the base manager, which this does not guard.)"""

    def update(self, **kwargs: object) -> int:
        raise AppendOnly("audit entries are not updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnly("audit entries are not deleted")


class AuditEntry(models.Model):
    """One action, by whom, on what, the target before and after it, and how
    it ended: written ``pending`` before the effect, ``done`` or ``failed``
    (with the error) once it is known. A pending entry whose process died
    says just that: the outcome is unknown. ``unknown``: Kafka did not say
    within the wait whether a write took; it may say later, and then the
    entry gets that outcome."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"
        UNKNOWN = "unknown"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who acted, as they were named then: kept when the user is deleted.
    username = models.CharField(max_length=150, blank=True, db_index=True)
    action = models.CharField(max_length=64, db_index=True)
    target = models.TextField()
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status, db_index=True)
    error = models.TextField(blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.username} {self.action} {self.target}"

    def save(self, *args: object, **kwargs: object) -> None:
        """Inserts only, with every text printable (see printable.py)."""
        if not self._state.adding:
            raise AppendOnly("audit entries are not changed; finish() sets the outcome")
        if self.user is not None and not self.username:
            self.username = self.user.get_username()
        self.target, self.error = printable(self.target), printable(self.error)
        self.before, self.after = printable_json(self.before), printable_json(self.after)
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise AppendOnly("audit entries are not deleted")

    def finish(self, status: Status, *, after: object = None, error: str = "") -> None:
        """The outcome of a pending entry, set once; an unknown one may be
        set once more, to what it turned out to be."""
        after, error = printable_json(after), printable(error)
        settable = [self.Status.PENDING]
        if status != self.Status.UNKNOWN:
            settable.append(self.Status.UNKNOWN)
        pending = type(self)._base_manager.filter(pk=self.pk, status__in=settable)
        if pending.update(status=status, after=after, error=error) != 1:
            raise AppendOnly(f"audit entry {self.pk} already has its outcome")
        self.status, self.after, self.error = status, after, error


class Job(models.Model):
    """Who started a background job: its progress is theirs and the admins' to see."""

    task_id = models.CharField(max_length=255, unique=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.task_id


@functools.lru_cache(maxsize=256)
def _mask_rules(json_paths: str, headers: str, patterns: str) -> MaskRules:
    return MaskRules.build(_lines(json_paths), _lines(headers), _lines(patterns))


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class QueueMinute(models.Model):
    """Acks, redeliveries and dead letters of a queue in one minute, as its
    trackers counted them: the workers add their counts every few seconds,
    so the dashboard shows rates and sparklines without reading any topic."""

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="minutes")
    minute = models.DateTimeField()
    acked = models.PositiveIntegerField(default=0)
    redelivered = models.PositiveIntegerField(default=0)
    dead_lettered = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["queue", "-minute"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "minute"], name="unique_queue_minute")
        ]

    def __str__(self) -> str:
        return f"{self.queue} {self.minute:%Y-%m-%d %H:%M}"


class ScheduleMinute(models.Model):
    """How late a schedules topic's schedulers fired in one minute: fires
    per bucket of scheduler/lateness.py's BOUNDS_S, keyed by its bound in
    seconds ("+Inf" last), not cumulative; keyed, so a row outlives a change
    of the bounds.
    The workers add what their schedulers fired every few seconds, as they
    add the trackers' counts, so an alert reads a p99 without a metrics store."""

    schedules = models.ForeignKey(ScheduleTopic, on_delete=models.CASCADE, related_name="minutes")
    minute = models.DateTimeField()
    late = models.JSONField(default=dict)

    class Meta:
        ordering = ["schedules", "-minute"]
        constraints = [
            models.UniqueConstraint(fields=["schedules", "minute"], name="unique_schedules_minute")
        ]

    def __str__(self) -> str:
        return f"{self.schedules} {self.minute:%Y-%m-%d %H:%M}"


class LifecycleMinute(models.Model):
    """What the analytics pipeline computed for a queue in one minute.

    Recomputed from the topics on every run and upserted, so unlike
    QueueMinute (the trackers' live counts) it is exact once a run covers
    the minute, and it holds the latency quantiles the charts draw.
    """

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="lifecycle_minutes")
    minute = models.DateTimeField()
    produced = models.PositiveIntegerField(default=0)
    acked = models.PositiveIntegerField(default=0)
    redelivered = models.PositiveIntegerField(default=0)
    dead_lettered = models.PositiveIntegerField(default=0)
    latency_p50_ms = models.FloatField(null=True)
    latency_p95_ms = models.FloatField(null=True)
    latency_p99_ms = models.FloatField(null=True)
    processing_p50_ms = models.FloatField(null=True)
    processing_p95_ms = models.FloatField(null=True)
    processing_p99_ms = models.FloatField(null=True)

    class Meta:
        ordering = ["queue", "minute"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "minute"], name="unique_lifecycle_minute")
        ]

    def __str__(self) -> str:
        return f"{self.queue} {self.minute:%Y-%m-%d %H:%M}"


class SentOnce(models.Model):
    """A send made with an Idempotency-Key (services/queues/sent_once.py): a retry
    with the same key gets this send's outcome instead of writing again.
    ``entry`` is its audit entry, which holds the outcome."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    entry = models.ForeignKey(AuditEntry, null=True, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "queue", "key"], name="one_send_per_key")
        ]

    def __str__(self) -> str:
        return f"{self.key} on {self.queue_id}"


class SqsAccessKey(models.Model):
    """An access key of the SQS endpoint, a user's: requests signed with it
    act with the user's roles. SigV4 signs with the secret itself, so it is
    kept to verify signatures: encrypted (services/sqs_keys.py), shown once."""

    key_id = models.CharField(max_length=20, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sqs_keys"
    )
    secret = models.BinaryField()  # a Fernet token
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.key_id


class SqsQueue(models.Model):
    """What the SQS endpoint keeps of a queue beyond its registration: the
    SQS attributes with no Kafka counterpart, its tags, and whether SQS made
    it (only then does DeleteQueue delete its topics too). A queue
    registered in the console gets one, with SQS's defaults, when SQS first
    names it."""

    queue = models.OneToOneField(Queue, on_delete=models.CASCADE, related_name="sqs")
    created_by_sqs = models.BooleanField(default=False)
    delay_seconds = models.PositiveIntegerField(default=0)
    maximum_message_size = models.PositiveIntegerField(default=1_048_576)
    message_retention_period = models.PositiveIntegerField(default=345_600)
    receive_message_wait_time_seconds = models.PositiveSmallIntegerField(default=0)
    tags = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return str(self.queue)


class SqsMoveTask(models.Model):
    """A message move task of the SQS endpoint (StartMessageMoveTask): the
    messages of a queue that is another's dead-letter queue moved back to
    the queues they came from, or to one destination, by a worker's job
    (sqs/moving.py). Kept after it ends: ListMessageMoveTasks shows the
    last ten of a queue."""

    RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED = (
        "RUNNING",
        "COMPLETED",
        "CANCELLING",
        "CANCELLED",
        "FAILED",
    )
    ACTIVE = (RUNNING, CANCELLING)

    handle = models.CharField(max_length=64, unique=True)
    source = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="+")
    # Empty: each message back to the queue it was dead-lettered from.
    destination = models.CharField(max_length=names.MAX_TOPIC_LENGTH, blank=True)
    max_per_second = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, default=RUNNING)
    to_move = models.PositiveIntegerField(default=0)
    moved = models.PositiveIntegerField(default=0)
    failure_reason = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    # Written by its job at least every few seconds: a task whose job died
    # (its worker killed) is told from one still running by this.
    beat_at = models.DateTimeField(default=timezone.now)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return self.handle


class SsoIdentity(models.Model):
    """Who a user is at the identity provider (console/oidc/): its issuer and
    subject, the pair OpenID Connect promises never to reuse. A user signing
    in is found by it, never by a username or an email another account may
    hold, so no one at the provider can take over a local account."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    first_seen = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_sso_identity")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class AlertRuleQuerySet(models.QuerySet):
    def with_targets(self) -> "AlertRuleQuerySet":
        """With the queue or schedules topic and its cluster, which every
        page, answer and check of a rule reads."""
        return self.select_related("queue__cluster", "schedules__cluster")


class AlertRule(models.Model):
    """A condition on one queue or schedules topic, checked every minute by
    beat (console/services/alerts/), and who is told when it starts and when it
    ends: a webhook (JSON signed with HMAC-SHA256, or Slack's body), emails,
    or both. ``firing`` is the state the last check left, so a condition
    that holds for an hour is told once, not sixty times."""

    class Condition(models.TextChoices):
        DEAD_LETTERS = "dead_letters", "dead letters arriving (count in the window)"
        OLDEST_IN_FLIGHT = "oldest_in_flight", "oldest in-flight delivery (seconds)"
        REDELIVERIES = "redeliveries", "redeliveries per minute"
        MARKERS_LAG = "markers_lag", "tracker markers lag (records)"
        GROUP_LAG = "group_lag", "group lag (a queue's: records not yet taken)"
        IDLE_WORKERS = "idle_workers", "workers owning no partitions"
        LATENESS_P99 = "lateness_p99", "scheduler fire lateness p99 (seconds)"

    queue = models.ForeignKey(
        Queue, null=True, blank=True, on_delete=models.CASCADE, related_name="alert_rules"
    )
    schedules = models.ForeignKey(
        ScheduleTopic, null=True, blank=True, on_delete=models.CASCADE, related_name="alert_rules"
    )
    condition = models.CharField(max_length=24, choices=Condition)
    threshold = models.PositiveIntegerField(
        validators=[MaxValueValidator(alert_rules.MAX_THRESHOLD)],
        help_text="fires when the value is above this",
    )
    window_minutes = models.PositiveSmallIntegerField(
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(alert_rules.MAX_WINDOW_MINUTES)],
        help_text="dead letters, redeliveries and lateness: the minutes counted",
    )
    webhook_url = models.URLField(max_length=2000, blank=True)
    # Fernet-encrypted (secrets_at_rest.py): needed to sign, never shown again.
    webhook_secret = models.BinaryField(blank=True, default=b"")
    slack = models.BooleanField(default=False, help_text="send Slack's body: {'text': …}")
    emails = models.TextField(blank=True, help_text="one address per line")
    enabled = models.BooleanField(default=True)
    silenced_until = models.DateTimeField(null=True, blank=True)
    firing = models.BooleanField(default=False)
    value = models.FloatField(null=True, blank=True, help_text="at the last check")
    checked_at = models.DateTimeField(null=True, blank=True)
    # Why the last check could not measure; why the last notification failed.
    check_error = models.TextField(blank=True)
    delivery_error = models.TextField(blank=True)

    objects = AlertRuleQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(queue__isnull=False, schedules__isnull=True)
                | models.Q(queue__isnull=True, schedules__isnull=False),
                name="alert_rule_has_one_target",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_condition_display()} > {self.threshold} on {self.target}"

    @property
    def on(self) -> "Queue | ScheduleTopic":
        """What the rule watches: its queue or its schedules topic."""
        return self.queue if self.queue_id else self.schedules

    @property
    def target(self) -> str:
        return self.on.topic

    @property
    def target_kind(self) -> str:
        return "queue" if self.queue_id else "schedules"

    def clean(self) -> None:
        """A condition its target can have, a webhook over http(s)."""
        if self.queue_id or self.schedules_id:
            backend = self.queue.backend if self.queue_id else None
            problem = alert_rules.refused(self.target_kind, backend, self.condition)
            if problem:
                raise ValidationError({"condition": problem})
        try:
            if self.webhook_url:
                URLValidator(schemes=["http", "https"])(self.webhook_url)
        except ValidationError:
            raise ValidationError({"webhook_url": "expected an http(s) URL"}) from None

    def silenced(self, now: datetime) -> bool:
        return self.silenced_until is not None and self.silenced_until > now

    def recipients(self) -> list[str]:
        return [line.strip() for line in self.emails.splitlines() if line.strip()]


class AlertEvent(models.Model):
    """An alert starting or ending, and whether its rule's receivers were
    told: the alert history page and API read these."""

    class Kind(models.TextChoices):
        FIRING = "firing"
        RESOLVED = "resolved"

    class Told(models.TextChoices):
        PENDING = "pending", "being told"
        SENT = "sent"
        FAILED = "failed"
        SILENCED = "silenced"
        NOBODY = "nobody", "no receiver set"

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(db_index=True)
    kind = models.CharField(max_length=8, choices=Kind)
    value = models.FloatField()
    threshold = models.PositiveIntegerField()
    told = models.CharField(max_length=8, choices=Told)
    # When the last telling began: a "pending" event older than a telling
    # can take was left by a worker that died, and is told again.
    told_at = models.DateTimeField(null=True, blank=True)
    # Which receivers have it: telling again after a failure skips them.
    webhook_sent = models.BooleanField(default=False)
    email_sent = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} {self.rule}"
