"""Peak memory of a benchmark's processes, the one way every benchmark reports it."""

from __future__ import annotations

import resource
from typing import Any


def python_peak_mib() -> float:
    """This Python process's peak resident set (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def jvm_peak_mib(spark: Any) -> float:
    """The Spark driver JVM's peak resident set (Linux's VmHWM, MiB); 0 where it cannot be read."""
    try:
        pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration, ValueError):
        return 0.0
