"""Which reader an input goes to, without being told: Spark event logs (a folder, a rolled ``eventlog_v2_``
folder, a file named by a codec, or a file whose first line is a ``SparkListener`` event) or text logs (read line
by line by :mod:`hive_bridge.workload.textlogs`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

from hive_bridge.workload.codecs import codec_of
from hive_bridge.workload.eventlog import Problem, Scan, application_files, read_application


def is_event_log(path: str) -> bool:
    """Whether ``path`` is a Spark event log (file or rolled folder) or a folder of them."""
    if path == "-":
        return False
    if os.path.isdir(path):
        return True
    if codec_of(path) is not None:
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return False
    return head.startswith(b'{"Event":"SparkListener')


_WORKLOAD_MARKS = re.compile(r"(?:Compiling|Executing) command\(queryId=|Pushed Filters:|Post-Scan Filters:|"
                             r"FilterCompat: (?:Filtering using predicate|Predicate has been collapsed)|"
                             r"HoodieFileIndex: Total ")


def has_workload_lines(paths: Sequence[str]) -> bool:
    """Whether a text log holds lines only the workload replay reads (HiveServer2 statements, Spark driver
    filter lines, parquet FilterCompat lines, Hudi's file index counts); standard input is not looked at."""
    for path in paths:
        if path == "-":
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                if any(_WORKLOAD_MARKS.search(line) for line in fh):
                    return True
        except OSError:
            continue
    return False


def split_inputs(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """(event logs, text logs) among the inputs, in their order."""
    events = [p for p in paths if is_event_log(p)]
    texts = [p for p in paths if p not in events]
    return events, texts


def _applications(paths: Sequence[str], problems: list[Problem]) -> Iterator[list[str]]:
    """The files of each application under ``paths``, path by path (a path that cannot be read, or holds no
    event log, appended to ``problems``)."""
    for path in paths:
        try:
            apps = application_files(path)
        except OSError as exc:
            problems.append(Problem(path, 0, f"cannot read: {exc.strerror}"))
            continue
        except Exception as exc:  # LogReadError: no such file or folder
            problems.append(Problem(path, 0, str(exc).removeprefix(f"{path}: ")))
            continue
        if not apps:
            problems.append(Problem(path, 0, "no Spark event log in this folder"))
        yield from apps


def event_log_scans(paths: Sequence[str], problems: list[Problem]) -> Iterator[Scan]:
    """Every scan of every application under ``paths`` (problems appended as met, the reading goes on)."""
    for files in _applications(paths, problems):
        yield from read_application(files, problems)


def _read_one(files: list[str]) -> list[tuple[list[Scan], list[Problem]]]:
    problems: list[Problem] = []
    scans = list(read_application(files, problems))
    return [(scans, problems)]


def event_log_scans_spark(paths: Sequence[str], problems: list[Problem], spark: Any) -> Iterator[Scan]:
    """As :func:`event_log_scans`, the applications read by Spark executors in parallel (one task each; the
    files must be readable at the same paths by the executors). The scans and problems are the same."""
    apps = list(_applications(paths, problems))
    if not apps:
        return
    rdd = spark.sparkContext.parallelize(apps, len(apps))
    for scans, found_problems in rdd.flatMap(_read_one).toLocalIterator():
        problems.extend(found_problems)
        yield from scans
