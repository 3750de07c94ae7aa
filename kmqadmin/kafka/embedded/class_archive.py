"""Builds the broker's class-data-sharing archive (CLASS_ARCHIVE in broker.py).

A JVM given -XX:ArchiveClassesAtExit writes the classes it loaded to a file
as it exits; a JVM given that file as -XX:SharedArchiveFile maps them instead
of loading them (JDK 13+). Java 17 does not make or refresh the file by
itself (AutoCreateSharedArchive is Java 19's), so `make deps` runs this once
its Kafka jars are in place: one embedded broker started, asked for its
metadata and stopped. The archive names the jars' paths and the JVM that made
it; a JVM of another build ignores it.

    python -m kmqadmin.kafka.embedded.class_archive [JARS]
"""

import sys
from pathlib import Path

from kmqadmin.kafka.embedded.broker import CLASS_ARCHIVE, DEFAULT_JARS, EmbeddedBroker


def build(jars: Path = DEFAULT_JARS) -> Path:
    """The archive of the classes a broker of ``jars`` loads to start and serve
    metadata, written beside them. An older one goes first (the building
    broker would map it); the new one takes its name only once complete."""
    archive = jars / CLASS_ARCHIVE
    written = archive.with_name(f"{CLASS_ARCHIVE}.partial")
    archive.unlink(missing_ok=True)
    written.unlink(missing_ok=True)
    with EmbeddedBroker(jars=jars, jvm_options=[f"-XX:ArchiveClassesAtExit={written}"]):
        pass  # started means it answered a metadata request
    written.rename(archive)
    return archive


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_JARS))
