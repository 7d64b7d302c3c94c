"""Peak memory of a benchmark's processes, the one way every benchmark reports it."""

from __future__ import annotations

import os
import resource
from typing import Any


def python_peak_mib() -> float:
    """This Python process's peak resident set (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def jvm_pid(spark: Any) -> int:
    """The process id of a Spark session's driver JVM."""
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def reset_peak(pid: int | None = None) -> bool:
    """Linux: set a process's peak resident set (VmHWM; this process's by default) to its current one, so that
    :func:`peak_mib` then reports the peak of what runs after; False where it cannot."""
    try:
        with open(f"/proc/{pid or os.getpid()}/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_mib(pid: int | None = None) -> float:
    """A process's peak resident set (Linux's VmHWM, MiB; this process's by default); 0 where it cannot be read."""
    try:
        with open(f"/proc/{pid or os.getpid()}/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration, ValueError):
        return 0.0


def jvm_peak_mib(spark: Any) -> float:
    """The Spark driver JVM's peak resident set (Linux's VmHWM, MiB); 0 where it cannot be read."""
    try:
        return peak_mib(jvm_pid(spark))
    except (AttributeError, ValueError):
        return 0.0
