"""Benchmark: building the column-statistics index with local threads against Spark executors.

Each build starts from no index (``ColumnStatsIndex.clear()``) and reads every latest base file's footer and
every log file (``source="footers"``: the metadata table is not used), persisting the rows. The two builds run
in separate child processes so each one's memory is its own:

- ``local``: ``ColumnStatsIndex(table)``, the default reader (a thread pool of ``--workers`` threads);
- ``spark``: ``ColumnStatsIndex(table, reader=SparkStatsReader(spark))``, Spark ``--master`` (default local[2]);
  the session's start is timed apart and not counted in files/s (a build on a running cluster does not pay it).

Reported per build and run: files/s (footers + log files read, over the wall time of ``load()`` +
``log_table()``), peak RSS of the process tree (the driver, and for Spark its JVM and Python workers: /proc
sampled every 0.1 s) and of the driver alone. Then the persisted segments of the last local and Spark runs are
compared (sorted by path, ``Table.equals``): the builds must persist identical rows.

**The index is written into the table** (``<table>/.hoodie/.hive_bridge/column_stats/``, replacing any index
there): give ``--table`` a copy you may write into. Without ``--table`` a copy-on-write table of ``--files``
base files of ``--rows`` rows in ``--partitions`` partitions is written by HudiWriter (``--keep DIR`` keeps it
there and reuses it).

Run: ``.venv/bin/python benchmarks/bench_index_build.py [--table DIR | --files 100000 --rows 10 --keep DIR]
[--master local[2]] [--runs 2] [--workers N] [--files-per-task 2000]``.

``--nan-counts [--baseline DIR]``: instead of local against Spark, what NaN counts cost the local build, in
``--runs`` rounds of interleaved builds (one fresh process each): ``footer`` (NaN counts only from the footer;
the table's files, written by pyarrow, cannot have them, so their thrift is not decoded), ``footer decoded`` (a
copy of the table whose footers carry ``Statistics.nan_count`` and name a writer that writes it, so every footer's
thrift is decoded), ``counted`` (``HIVE_BRIDGE_COUNT_NANS=true``: the float/double columns' values read) and,
with ``--baseline``, the same benchmark of another checkout (e.g. the code before NaN counts) on the table.
Reports the median build time of each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.segments import read_segment
from hive_bridge.table.table import HudiTable


def build_table(root: Path, files: int, rows: int, partitions: int) -> None:
    """The table ``bench_mdt.py`` builds (without its metadata table): ``files`` base files of ``rows`` rows;
    file k holds ids [k*rows, (k+1)*rows) in partition k % partitions."""
    from bench_mdt import build

    build(root, files, rows, partitions)


# ------------------------------------------------------------------------------------------------ memory
class TreeRss:
    """Peak resident memory of this process and its descendants, sampled from /proc (Linux)."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        me = os.getpid()
        while True:
            self.peak = max(self.peak, self._sample(me, page))
            if self._stop.wait(self.interval):
                return

    @staticmethod
    def _sample(root: int, page: int) -> int:
        parent: dict[int, int] = {}
        rss: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            pid = int(entry)
            parent[pid] = int(fields[1])   # field 4 (ppid) after the command name
            rss[pid] = int(fields[21]) * page  # field 24 (rss, pages)
        total = 0
        for pid, size in rss.items():
            p = pid
            while p > 1 and p != root:
                p = parent.get(p, 0)
            if p == root:
                total += size
        return total


def _driver_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ------------------------------------------------------------------------------------------------- child
def child(args: argparse.Namespace) -> None:
    """One kind of build, ``--runs`` times; prints one JSON line per run."""
    reader: Any = None
    start_s = 0.0
    with TreeRss() as tree:
        if args.child == "spark":
            from hive_bridge.spark import start as spark_start
            from hive_bridge.spark.index_build import SparkStatsReader

            t0 = time.perf_counter()
            spark = spark_start.start_session("bench-index-build", master=args.master)
            start_s = time.perf_counter() - t0
            reader = SparkStatsReader(spark, files_per_task=args.files_per_task)
        for run in range(args.runs):
            tasks_before = getattr(reader, "tasks", 0)
            t0 = time.perf_counter()
            table = HudiTable.open(args.table)
            slices = table.latest_file_slices()
            listing_s = time.perf_counter() - t0
            index = ColumnStatsIndex(table, source="footers", max_workers=args.workers, reader=reader)
            index.clear()
            t0 = time.perf_counter()
            index.load()
            index.log_table(slices)
            build_s = time.perf_counter() - t0
            c = index.counters
            read = c.files_from_footers + c.log_files_read
            print(json.dumps({
                "run": run + 1, "files": read, "footers": c.files_from_footers, "logs": c.log_files_read,
                "unreadable": c.unreadable_footers + c.unreadable_log_files, "seconds": build_s,
                "files_per_s": read / build_s, "listing_s": listing_s, "spark_start_s": start_s,
                "tree_peak_mb": max(tree.peak / 2**20, _driver_peak_mb()), "driver_peak_mb": _driver_peak_mb(),
                "workers": index.max_workers, "tasks": getattr(reader, "tasks", 0) - tasks_before,
                "load": os.getloadavg()[0],
            }), flush=True)


# ------------------------------------------------------------------------------------------------ parent
def _segments(root: Path) -> list[pa.Table]:
    directory = root / ".hoodie" / ".hive_bridge" / "column_stats"
    return [read_segment(p).sort_by([("path", "ascending"), ("instant", "ascending")])
            for p in sorted(directory.glob("seg-*.arrow"))]


def _run_child(kind: str, args: argparse.Namespace, table: Path, *, runs: int | None = None,
               script: str = __file__, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    cmd = [sys.executable, script, "--child", kind, "--table", str(table), "--runs", str(runs or args.runs),
           "--master", args.master, "--files-per-task", str(args.files_per_task)]
    if args.workers:
        cmd += ["--workers", str(args.workers)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        sys.exit(f"the {kind} build failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    runs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    for r in runs:
        label = f"{kind} (master {args.master}, {r['tasks']} tasks)" if kind == "spark" else \
            f"local ({r['workers']} threads)"
        print(f"[{label}] run {r['run']}: {r['files']:,} files ({r['footers']:,} footers, {r['logs']:,} log files, "
              f"{r['unreadable']} unreadable) in {r['seconds']:.2f} s = {r['files_per_s']:,.0f} files/s; peak RSS "
              f"{r['tree_peak_mb']:,.0f} MiB (process tree), {r['driver_peak_mb']:,.0f} MiB (driver); listing "
              f"{r['listing_s']:.2f} s" + (f"; session start {r['spark_start_s']:.1f} s" if kind == "spark" else "")
              + f"; load average {r['load']:.1f}", flush=True)
    return runs


def nan_counts(args: argparse.Namespace, table: Path) -> None:
    """Interleaved local builds: NaN counts from footers only, counted, and a baseline checkout's build."""
    from hive_bridge.testing.parquet_nan import give_base_files_nan_counts

    decoded = table.with_name(table.name + "_nan_footers")
    if not (decoded / ".hoodie" / "hoodie.properties").is_file():
        shutil.copytree(table, decoded)
        give_base_files_nan_counts(decoded)
    off = {"HIVE_BRIDGE_COUNT_NANS": "false"}
    variants: list[tuple[str, str, Path, dict[str, str]]] = [
        ("footer", __file__, table, off),
        ("footer decoded", __file__, decoded, off),
        ("counted", __file__, table, {"HIVE_BRIDGE_COUNT_NANS": "true"}),
    ]
    if args.baseline is not None:
        variants.insert(0, ("baseline", str(args.baseline / "benchmarks" / "bench_index_build.py"), table, {}))
    seconds: dict[str, list[float]] = {name: [] for name, _, _, _ in variants}
    for round_ in range(args.runs):
        for name, script, where, env in variants:
            print(f"[{name}] round {round_ + 1}:", end=" ", flush=True)
            seconds[name] += [r["seconds"] for r in _run_child("local", args, where, runs=1, script=script, env=env)]
    for where in (table, decoded):
        known = sum(pc.count(seg.column(c)).as_py() for seg in _segments(where)
                    for c in seg.column_names if c.endswith("::nan_count"))
        print(f"[check] {where.name}: {known:,} known NaN counts in the last build's segments")
    first = statistics.median(seconds[variants[0][0]])
    print("[summary] median build: " + ", ".join(
        f"{name} {statistics.median(v):.2f} s ({statistics.median(v) / first:.2f}x)" for name, v in seconds.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", type=Path, default=None,
                    help="an existing Hudi table to index (its index is REPLACED: pass a copy)")
    ap.add_argument("--files", type=int, default=100_000, help="base files of the generated table")
    ap.add_argument("--rows", type=int, default=10, help="rows per generated file")
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--keep", type=Path, default=None, help="folder to keep the generated table in (reused)")
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--runs", type=int, default=2, help="builds of each kind (each from no index)")
    ap.add_argument("--workers", type=int, default=None, help="local threads (default: the index's default)")
    ap.add_argument("--files-per-task", type=int, default=2000, help="files per Spark partition")
    ap.add_argument("--nan-counts", action="store_true",
                    help="compare local builds with NaN counts from footers only and counted (see above)")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="with --nan-counts: another checkout whose build runs as a third variant")
    ap.add_argument("--child", choices=("local", "spark"), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    work: Path | None = None
    if args.table is not None:
        table = args.table
    else:
        work = args.keep or Path(tempfile.mkdtemp(prefix="bench_index_build_"))
        table = work / f"events_{args.files}x{args.rows}"
        if not (table / ".hoodie" / "hoodie.properties").is_file():
            t0 = time.perf_counter()
            build_table(table, args.files, args.rows, args.partitions)
            print(f"[build] {args.files:,} files x {args.rows} rows written in {time.perf_counter() - t0:.1f} s")
    print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, table {table}")
    if args.nan_counts:
        try:
            nan_counts(args, table)
        finally:
            if work is not None and args.keep is None:
                shutil.rmtree(work, ignore_errors=True)
        return
    try:
        local = _run_child("local", args, table)
        local_segments = _segments(table)
        spark = _run_child("spark", args, table)
        spark_segments = _segments(table)
        same = len(local_segments) == len(spark_segments) and all(
            a.schema.equals(b.schema, check_metadata=True) and a.equals(b)
            for a, b in zip(local_segments, spark_segments, strict=True))
        rows = sum(s.num_rows for s in spark_segments)
        print(f"[check] persisted rows of the last local and Spark builds: {rows:,} rows in {len(spark_segments)} "
              f"segment(s), {'identical' if same else 'DIFFERENT'}")
        best_local = max(r["files_per_s"] for r in local)
        best_spark = max(r["files_per_s"] for r in spark)
        print(f"[summary] best files/s: local {best_local:,.0f}, Spark {args.master} {best_spark:,.0f} "
              f"({best_spark / best_local:.2f}x)")
        if not same:
            sys.exit(1)
    finally:
        if work is not None and args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
