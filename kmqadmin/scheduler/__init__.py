"""Scheduler core: Kafka-backed delayed delivery. Imports nothing from Django."""
