"""Filters in text logs (HiveServer2, Spark driver and executor logs, Hive task logs), as occurrences."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.runner import Occurrence


def text_occurrences(paths: Sequence[str], problems: list[Problem], time_zone: str = "UTC") -> Iterator[Occurrence]:
    """Every filter occurrence of the text logs ``paths``."""
    return iter(())
