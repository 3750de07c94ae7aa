"""The SparkSession the pipeline runs in, and the Kafka source it reads with."""

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from kmqadmin.pipeline.source import NAME, KafkaSource

# Spark's own source, when the spark-sql-kafka jar is on the classpath.
SPARK_KAFKA = "kafka"
_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
# What Spark's source must be told to read what ours reads: the headers, and
# no records of aborted or still open transactions (read_committed, as every
# queue consumer reads; ours gets it from kafka.client.config.consumer_config).
SPARK_KAFKA_OPTIONS = {"includeHeaders": "true", "kafka.isolation.level": "read_committed"}
# Spark's Kafka source and what it needs beyond pyspark's jars (jvm/spark/pom.xml,
# fetched by `make deps`); KMQ_SPARK_JARS names another folder.
DEFAULT_JARS = Path(__file__).resolve().parents[2] / ".jars" / "spark"


class SparkKafkaMissing(RuntimeError):
    """KMQ_PIPELINE_SOURCE=spark, but the session has no spark-sql-kafka jar."""

    def __init__(self) -> None:
        super().__init__(
            "KMQ_PIPELINE_SOURCE=spark, but Spark's Kafka source (spark-sql-kafka) is not on "
            f"the classpath: run `make deps` to fetch it into {DEFAULT_JARS} (or set "
            "KMQ_SPARK_JARS to a folder holding it), or set KMQ_PIPELINE_SOURCE=auto or python"
        )


def spark_jars() -> list[Path]:
    """The jars of KMQ_SPARK_JARS (default .jars/spark); none when the folder is absent."""
    folder = Path(os.environ.get("KMQ_SPARK_JARS") or DEFAULT_JARS)
    return sorted(folder.glob("*.jar")) if folder.is_dir() else []


def spark_session(master: str, app_name: str = "kmqadmin-analytics") -> SparkSession:
    """The process's session on ``master`` (SPARK_MASTER; ``local[*]`` by default).

    Python workers run this interpreter unless PYSPARK_PYTHON says
    otherwise: Spark refuses workers of another minor version, and ours has
    the pipeline's dependencies installed. A local session gets Spark's
    Kafka source from spark_jars(); on a cluster, spark-submit brings it
    (``--packages``, see docs/analytics.md) and its ``spark.jars`` is left alone.
    """
    # Read by the JVM when it starts, for every kind of Python worker it spawns.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        .config("spark.ui.showConsoleProgress", "false")
    )
    if master.startswith("local"):
        # One machine: shuffles the size of its cores, not of a cluster.
        builder = builder.config("spark.sql.shuffle.partitions", str(os.cpu_count() or 2))
        if jars := spark_jars():
            builder = builder.config("spark.jars", ",".join(map(str, jars)))
    return builder.getOrCreate()


def kafka_format(spark: SparkSession, choice: str) -> str:
    """The format name to read Kafka with: ``kafka`` (spark-sql-kafka) or
    ``kmq_kafka`` (ours). ``choice`` is KMQ_PIPELINE_SOURCE: ``spark``,
    ``python``, or ``auto`` for Spark's when its jar is on the classpath."""
    if choice not in ("auto", "spark", "python"):
        raise ValueError(f"KMQ_PIPELINE_SOURCE must be auto, spark or python, got {choice!r}")
    if choice != "python" and has_spark_kafka(spark):
        return SPARK_KAFKA
    if choice == "spark":
        raise SparkKafkaMissing()
    spark.dataSource.register(KafkaSource)
    return NAME


def has_spark_kafka(spark: SparkSession) -> bool:
    jvm = spark.sparkContext._jvm
    try:
        loader = jvm.Thread.currentThread().getContextClassLoader()
        loader.loadClass(_PROVIDER)
    except Exception:  # py4j wraps ClassNotFoundException; any failure means "not there"
        return False
    return True
