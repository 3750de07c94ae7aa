"""The SparkSession the pipeline runs in, and the Kafka source it reads with."""

import os
import sys

from pyspark.sql import SparkSession

from .source import NAME, KafkaSource

# Spark's own source, when the spark-sql-kafka jar is on the classpath.
SPARK_KAFKA = "kafka"
_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"


def spark_session(master: str, app_name: str = "kmqadmin-analytics") -> SparkSession:
    """The process's session on ``master`` (SPARK_MASTER; ``local[*]`` by default).

    Python workers run this interpreter unless PYSPARK_PYTHON says
    otherwise: Spark refuses workers of another minor version, and ours has
    the pipeline's dependencies installed.
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
    return builder.getOrCreate()


def kafka_format(spark: SparkSession, choice: str) -> str:
    """The format name to read Kafka with: ``kafka`` (spark-sql-kafka) or
    ``kmq_kafka`` (ours). ``choice`` is KMQ_PIPELINE_SOURCE: ``spark``,
    ``python``, or ``auto`` for Spark's when its jar is on the classpath."""
    if choice not in ("auto", "spark", "python"):
        raise ValueError(f"KMQ_PIPELINE_SOURCE must be auto, spark or python, got {choice!r}")
    if choice == "spark" or (choice == "auto" and has_spark_kafka(spark)):
        return SPARK_KAFKA
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
