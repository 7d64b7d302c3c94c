"""Which reader an input goes to, without being told (:mod:`hive_bridge.workload.inputs` tells it by what the
input holds): Spark event logs (a folder, a rolled ``eventlog_v2_`` folder, or a file whose first line is a
``SparkListener`` event once decompressed), text logs and files of filters (read line by line by
:mod:`hive_bridge.workload.textlogs`); and what cannot be read at all (a binary file, a FIFO or a device, a file
that is not there), reported."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hive_bridge.workload.accounting import EVENTS, FILTERS, LOG, Accounts
from hive_bridge.workload.eventlog import Problem, Scan, application_files, read_application
from hive_bridge.workload.inputs import sniff, text_lines


def is_event_log(path: str) -> bool:
    """Whether ``path`` is a Spark event log (file or rolled folder) or a folder of them."""
    if path == "-":
        return False
    return sniff(path)[0] == EVENTS


_WORKLOAD_MARKS = re.compile(r"(?:Compiling|Executing) command\(queryId=|Pushed Filters:|Post-Scan Filters:|"
                             r"FilterCompat: (?:Filtering using predicate|Predicate has been collapsed)|"
                             r"HoodieFileIndex: Total |\"event\": \"hive-bridge-serve-scan\"")


def has_workload_lines(paths: Sequence[str]) -> bool:
    """Whether a text log holds lines only the workload replay reads (HiveServer2 statements, Spark driver
    filter lines, parquet FilterCompat lines, Hudi's file index counts); standard input is not looked at, nor
    what cannot be read (it is reported when read)."""
    from hive_bridge.workload.accounting import LineCount

    for path in paths:
        if path == "-":
            continue
        for _, line in text_lines(path, LineCount(path, LOG), []):
            if _WORKLOAD_MARKS.search(line):
                return True
    return False


@dataclass
class Inputs:
    """The inputs of a run by kind, in their order: event logs, text inputs (path, kind: :data:`LOG`,
    :data:`FILTERS`, or None for standard input, told when read), and those that cannot be read (reported)."""

    events: list[str] = field(default_factory=list)
    texts: list[tuple[str, str | None]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def split_inputs(paths: Sequence[str], filters: Sequence[str] = (), accounts: Accounts | None = None) -> Inputs:
    """The inputs ``paths`` (logs, told by what they hold) and ``filters`` (files of filters, said so) by kind;
    one that cannot be read is a problem (and, with ``accounts``, an input counted as unreadable)."""
    out = Inputs()
    for path, said in [(p, False) for p in paths] + [(p, True) for p in filters]:
        if path == "-":
            out.texts.append((path, FILTERS if said else None))
            continue
        kind, why = sniff(path, filters=said)
        if kind is None:
            why = why or "cannot read"
            out.problems.append(Problem(path, 0, why))
            if accounts is not None:
                accounts.unreadable(path, "binary" if why.startswith("binary") else FILTERS if said else "unknown",
                                    why)
        elif kind == EVENTS:
            out.events.append(path)
        else:
            out.texts.append((path, kind))
    return out


def _applications(paths: Sequence[str], problems: list[Problem], accounts: Accounts | None) -> Iterator[list[str]]:
    """The files of each application under ``paths``, path by path (a path that cannot be read, or holds no
    event log, appended to ``problems``)."""
    for path in paths:
        why = None
        try:
            apps = application_files(path)
        except OSError as exc:
            why = f"cannot read: {exc.strerror}"
        except Exception as exc:  # LogReadError: no such file or folder
            why = str(exc).removeprefix(f"{path}: ")
        else:
            if not apps:
                why = "no Spark event log in this folder"
        if why is not None:
            problems.append(Problem(path, 0, why))
            if accounts is not None:
                accounts.unreadable(path, EVENTS, why)
            continue
        yield from apps


def event_log_scans(paths: Sequence[str], problems: list[Problem], accounts: Accounts | None = None) -> Iterator[Scan]:
    """Every scan of every application under ``paths`` (problems appended as met, the reading goes on; each
    file's lines counted in ``accounts``)."""
    for files in _applications(paths, problems, accounts):
        yield from read_application(files, problems, accounts)


def _read_one(files: list[str]) -> list[tuple[list[Scan], list[Problem], Accounts]]:
    problems: list[Problem] = []
    accounts = Accounts()
    scans = list(read_application(files, problems, accounts))
    return [(scans, problems, accounts)]


def event_log_scans_spark(paths: Sequence[str], problems: list[Problem], spark: Any,
                          accounts: Accounts | None = None) -> Iterator[Scan]:
    """As :func:`event_log_scans`, the applications read by Spark executors in parallel (one task each; the
    files must be readable at the same paths by the executors). The scans, problems and counts are the same."""
    apps = list(_applications(paths, problems, accounts))
    if not apps:
        return
    rdd = spark.sparkContext.parallelize(apps, len(apps))
    for scans, found_problems, found_accounts in rdd.flatMap(_read_one).toLocalIterator():
        problems.extend(found_problems)
        if accounts is not None:
            accounts.inputs.update(found_accounts.inputs)
        yield from scans
