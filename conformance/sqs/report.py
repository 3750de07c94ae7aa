"""Compares a run of moto's SQS tests with the known differences and
prints the figures as JSON: passed, failed, skipped, each known difference
with its tests, and what no entry explains. Exits 1 on a failure that no
entry explains, so a regression of the endpoint fails the run; a listed
test that passes is reported too (a timing or partition difference passes
when lucky; a fixed one is to be taken off the list).

usage: report.py <junit.xml> <known_differences.txt> <moto version>
"""

import fnmatch
import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def outcomes(junit: str) -> dict[str, tuple[str, str]]:
    """Each test's ``module::name`` with its outcome and failure message."""
    found = {}
    for case in ET.parse(junit).iter("testcase"):
        name = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        failure = case.find("failure")
        failure = failure if failure is not None else case.find("error")
        if failure is not None:
            found[name] = ("failed", failure.get("message") or "")
        elif case.find("skipped") is not None:
            found[name] = ("skipped", "")
        else:
            found[name] = ("passed", "")
    return found


def known(path: str) -> list[tuple[str, str]]:
    """(pattern, reason) pairs: a pattern is a ``module::test`` glob, or
    ``message:`` and a text the failure's message holds."""
    entries = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            line = line.strip()
            if line and not line.startswith("#"):
                pattern, _, reason = line.partition(" | ")
                entries.append((pattern.strip(), reason.strip()))
    return entries


def reason_for(name: str, message: str, entries: list[tuple[str, str]]) -> str | None:
    for pattern, reason in entries:
        if pattern.startswith("message:"):
            if pattern.removeprefix("message:").strip() in message:
                return reason
        elif fnmatch.fnmatchcase(name, pattern):
            return reason
    return None


def main(junit: str, known_path: str, moto: str) -> int:
    results, entries = outcomes(junit), known(known_path)
    explained, unexplained, now_passing = defaultdict(list), {}, []
    for name, (outcome, message) in sorted(results.items()):
        reason = reason_for(name, message, entries)
        if outcome == "failed" and reason is None:
            unexplained[name] = message[:300]
        elif outcome == "failed":
            explained[reason].append(name)
        elif outcome == "passed" and reason is not None:  # named by a glob: no message
            now_passing.append(name)
    counts = {k: sum(o == k for o, _ in results.values()) for k in ("passed", "failed", "skipped")}
    print(
        json.dumps(
            {
                "suite": f"moto {moto} tests/test_sqs, server mode",
                **counts,
                "known_differences": {r: len(t) for r, t in explained.items()},
                "unexplained_failures": unexplained,
                "listed_but_passing": now_passing,
            },
            indent=2,
        )
    )
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
