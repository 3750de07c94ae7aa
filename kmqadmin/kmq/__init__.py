"""Queue core: the kmq pattern on confluent-kafka. Imports nothing from Django."""
