"""Benchmark: the HTML report of a large replayed workload (``hive-bridge replay --html``).

A workload of ``--filters`` distinct filters over ``--tables`` tables (30 partitions × 40 files each, every fifth
table one partition of 900 files; :mod:`hive_bridge.testing.workloads`) is summed up
(:func:`~hive_bridge.workload.insights.workload_insights`) and drawn (:func:`~hive_bridge.workload.htmlreport.
render_report`), beside its peer in the same run: the JSON Lines report of the same workload (``--json``'s
``write_json``). Reported: wall time of each (best of ``--repeat``), the page's size, and the peak memory Python
allocated while rendering (``tracemalloc``).

Run: ``.venv/bin/python benchmarks/bench_html_report.py [--filters 10000 --tables 50 --repeat 3]``.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

import pyarrow as pa


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filters", type=int, default=10_000)
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from hive_bridge.pruning.snapshot import SnapshotCache
    from hive_bridge.testing.workloads import SAMPLE_ADVICE, synthetic_workload
    from hive_bridge.testing.writer import HudiWriter
    from hive_bridge.workload.htmlreport import render_report
    from hive_bridge.workload.insights import workload_insights
    from hive_bridge.workload.replay_report import write_json

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t"
        HudiWriter(path, rows_per_file=5).insert(pa.table({"id": pa.array(range(20), pa.int64())}))
        snap = SnapshotCache().get(str(path))
        work = synthetic_workload(snap, tables=args.tables, filters=args.filters)
        timings: dict[str, float] = {}
        size = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            workload_insights(work, 0, [])
            t1 = time.perf_counter()
            page = render_report(work, 0, [], advice=SAMPLE_ADVICE)
            t2 = time.perf_counter()
            write_json(io.StringIO(), work, 0, [])
            t3 = time.perf_counter()
            size = len(page.encode())
            for name, secs in (("insights", t1 - t0), ("html page (insights + charts + HTML)", t2 - t1),
                               ("peer: JSON Lines report", t3 - t2)):
                timings[name] = min(timings.get(name, secs), secs)
        tracemalloc.start()
        render_report(work, 0, [], advice=SAMPLE_ADVICE)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"{args.filters} distinct filters over {args.tables} tables; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, secs in timings.items():
        print(f"  {name:40s} {secs:7.2f} s (best of {args.repeat})")
    print(f"  page size {size / 1e6:.2f} MB; peak memory allocated while rendering {peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
