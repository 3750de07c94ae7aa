"""Setup errors that carry one actionable line for the operator.

Each names the environment variable (or command) that fixes it, so the CLI
can print ``str(error)`` instead of a traceback.
"""


class KafkaSetupError(RuntimeError):
    """Kafka is not usable as configured; the message says what to change."""


class BrokerUnavailable(KafkaSetupError):
    """No broker answered metadata at the configured bootstrap servers."""

    def __init__(self, bootstrap_servers: str, detail: str) -> None:
        super().__init__(
            f"cannot reach Kafka at {bootstrap_servers} ({detail}); set KAFKA_BOOTSTRAP_SERVERS "
            "to a reachable broker, or unset it and start the embedded one with "
            "`python manage.py kmq broker`"
        )


class EmbeddedBrokerError(KafkaSetupError):
    """The embedded Apache Kafka could not be started (no java, no jars, a foreign data dir)."""


class TopicMissing(KafkaSetupError):
    """A topic a registered queue or schedules topic needs does not exist."""

    def __init__(self, topic: str) -> None:
        super().__init__(
            f"topic {topic} does not exist; create it (QueueConfig.ensure_topics, or "
            "`python manage.py kmq doctor` lists what is missing)"
        )


class ClusterSettingError(KafkaSetupError):
    """A cluster's security setting cannot be used as given (a secret's
    variable unset, a file unreadable, credentials refused)."""

    def __init__(self, cluster: str, setting: str, problem: str) -> None:
        super().__init__(f"cluster {cluster}: {setting}: {problem}")
