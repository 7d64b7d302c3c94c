"""Benchmark: planning a query from Hudi's metadata table (MDT) against the folder listing + hive-bridge's own index.

A large synthetic copy-on-write table (table version 8, written by HudiWriter: ``--files`` base files of
``--rows`` rows in ``--partitions`` partitions, keys clustered so a key range lives in a few files) gets the
metadata table Hudi 1.0 initialises on an existing table (``hive_bridge.testing.mdt_writer``: ``files``,
``column_stats`` for every column Hudi indexes by default and ``partition_stats``, HFiles with CRC32C checksums as
Hudi writes them).
Then, in one process, for one selective filter (a key range):

1. **First query on a never-indexed table**, as the product runs it (a table snapshot: what ``read_hudi``,
   ``list_files``, the data source and the handler use), each in a fresh Python process (modules imported
   before the clock starts; nothing of the table read): the MDT path (listing from the MDT ``files``
   partition, statistics from MDT ``column_stats`` where it has them, only the filter's column decoded; no
   footer read), ``--first-runs`` times (median), against the folder listing + building the footer index
   (every footer read and persisted), once. Target: the MDT path >= 20x faster.
2. **Planning, cold and repeated**: the MDT path against the folder listing + the persisted own index (built in
   step 1), same prune; run 1 is the first in the process, then ``--runs`` more, alternating. Target: the MDT
   path <= 0.5 s at 100,000 files and >= 2x faster than folders + own index.
3. Peak memory of each path (tracemalloc's Python peak and pyarrow's pool peak, one extra run each).
4. Every path keeps the same slices (asserted).
5. Where the MDT path's time goes: per stage, and cProfile's top functions (``--profile``, or whenever the MDT
   path misses its target).
6. The partition statistics stage (the MDT also holds ``partition_stats``): one-shot planning (``plan_slices``)
   with and without it, caches emptied before each run, for ``part = 42`` (the partition column, stored in the
   files) and the key range; ``--only partition-stats`` runs this section alone.

Run: ``.venv/bin/python benchmarks/bench_mdt.py [--files 100000] [--rows 10] [--partitions 100] [--runs 5]
[--keep DIR] [--profile] [--hudi-rs] [--first-runs 5]``. ``--keep DIR`` keeps the table in DIR and reuses it when it is there.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import io
import os
import pstats
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sarg
from hive_bridge import config
from hive_bridge.mdt.keys import COLUMN_STATS, FILES, PARTITION_STATS
from hive_bridge.pruning import Pruner
from hive_bridge.pruning.pruner import filter_columns, plan_slices
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import write_metadata_table
from hive_bridge.testing.writer import HudiWriter

#: imported before anything is timed: "cold" is about the table (nothing of it read or decoded yet), not about
#: Python importing modules a long-lived process has loaded anyway (numpy.ma alone costs 0.2 s on first use)
WARM_IMPORTS = ("numpy.ma", "hive_bridge.formats.avro_columns", "hive_bridge.mdt.colstats", "hive_bridge.stats.mdt_rows")

SCHEMA = {"id": "bigint", "name": "string", "value": "double", "amount": "decimal(14,2)", "day": "date",
          "ts": "timestamp", "part": "int"}
MDT_TARGET_S = 0.5
#: what the metadata table of the benchmark's table holds
MDT_PARTITIONS = (FILES, COLUMN_STATS, PARTITION_STATS)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(root: Path, files: int, rows: int, partitions: int) -> None:
    """``files`` base files of ``rows`` rows; file k holds ids [k*rows, (k+1)*rows) in partition k % partitions."""
    writer = HudiWriter(root, table_name="bench_mdt", version=8, partition_fields=["part"], rows_per_file=rows)
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    step = 200_000 // rows * rows                      # rows per insert (several commits keep memory small)
    total = files * rows
    for start in range(0, total, step):
        ids = list(range(start, min(total, start + step)))
        writer.insert(pa.table({
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"name-{i:010d}" for i in ids], pa.string()),
            "value": pa.array([i * 0.5 for i in ids], pa.float64()),
            "amount": pa.array([Decimal(i) / 100 for i in ids], pa.decimal128(14, 2)),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=(i // rows) % 365) for i in ids], pa.date32()),
            "ts": pa.array([base + dt.timedelta(seconds=i) for i in ids], pa.timestamp("us", tz="UTC")),
            "part": pa.array([(i // rows) % partitions for i in ids], pa.int32()),
        }))


# ---------------------------------------------------------------------------------------------- the paths


class Plan:
    """One planning: where its time went, what it kept."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self.kept: list[tuple[str, str]] = []
        self.total = 0.0
        self.counters: Any = None
        self.listing_source = ""


def _plan(open_table: Callable[[], HudiTable], make_index: Callable[[HudiTable], ColumnStatsIndex],
          filt: sarg.SearchArgument) -> Plan:
    out = Plan()
    t0 = time.perf_counter()
    table = open_table()
    t1 = time.perf_counter()
    slices = table.latest_file_slices()
    t2 = time.perf_counter()
    index = make_index(table)
    pruner = Pruner(table, index, slices)            # reads the statistics of every slice (one index.table call)
    t3 = time.perf_counter()
    result = pruner.run(filt)
    t4 = time.perf_counter()
    out.stages = {"open": t1 - t0, "latest slices": t2 - t1, "statistics": t3 - t2, "prune": t4 - t3}
    out.total = t4 - t0
    out.kept = sorted((s.partition_path, s.file_id) for s in result.slices)
    out.counters = index.last
    out.listing_source = table.listing_source
    return out


def plan_with_partition_stats(root: Path, filt: sarg.SearchArgument, partition_stats: bool) -> Plan:
    """The MDT path as ``plan_slices`` runs it (a one-shot query: CLI, handler, catalog), with or without the
    partition statistics stage; caches of earlier runs in the process are emptied first."""
    config.clear_caches()
    out = Plan()
    t0 = time.perf_counter()
    table = HudiTable.open(root, listing="mdt")
    slices = table.latest_file_slices()
    t1 = time.perf_counter()
    index = MdtOnlyIndex(table, persist=False, source="mdt", mdt_columns=filter_columns(table, filt))
    result = plan_slices(table, index, slices, filt, partition_stats=partition_stats)
    t2 = time.perf_counter()
    out.stages = {"open + latest slices": t1 - t0, "statistics + prune": t2 - t1}
    out.total = t2 - t0
    out.kept = sorted((s.partition_path, s.file_id) for s in result.slices)
    out.counters = (index.last, result.dropped_by_partition_stats, result.partitions_dropped_by_stats)
    out.listing_source = table.listing_source
    return out


def partition_stats_section(root: Path, key_range: sarg.SearchArgument, runs: int) -> None:
    """5. The partition statistics stage: planning from the MDT with and without it, caches emptied before each
    run (what a process's first query on the table pays), alternating, for a filter on the partition column
    (stored in the files, so without partition statistics every file's entry of it is read) and for the key
    range (no partition can be dropped: what the stage costs when it cannot help)."""
    filters = {"part = 42 (partition column stored in the files)": sarg.parse("leaf-(EQUALS part 42)", SCHEMA),
               "the key range (every partition may hold it)": key_range}
    for label, filt in filters.items():
        with_ps: list[Plan] = []
        without: list[Plan] = []
        for _ in range(runs):
            gc.collect()
            with_ps.append(plan_with_partition_stats(root, filt, True))
            gc.collect()
            without.append(plan_with_partition_stats(root, filt, False))
        for p in with_ps + without:
            assert p.kept == with_ps[0].kept, "partition statistics changed what is kept"
        a = statistics.median(p.total for p in with_ps)
        b = statistics.median(p.total for p in without)
        stage = "statistics + prune"
        a_stage = statistics.median(p.stages[stage] for p in with_ps)
        b_stage = statistics.median(p.stages[stage] for p in without)
        counters, dropped, parts = with_ps[0].counters
        plain = without[0].counters[0]
        print(f"[partition stats] {label}: total with {a:.3f} s, without {b:.3f} s ({b / a:.2f}x); {stage} with "
              f"{a_stage:.3f} s, without {b_stage:.3f} s ({b_stage / a_stage:.2f}x) (medians of {runs}); "
              f"{dropped:,} slices of {parts} partitions dropped by partition statistics, column_stats entries "
              f"looked up for {counters.files_from_mdt:,} files (without: {plain.files_from_mdt:,}); "
              f"{len(with_ps[0].kept):,} slices kept; load average {os.getloadavg()[0]:.1f}")


class MdtOnlyIndex(ColumnStatsIndex):
    """``source="mdt"`` without the persisted own index (which ColumnStatsIndex consults first, whatever the
    source): what a table that was never indexed by hive-bridge gets."""

    def _segment_paths(self) -> list[Path]:
        return []


def mdt_path(root: Path, filt: sarg.SearchArgument) -> Plan:
    """Listing from the MDT files partition, statistics from MDT column_stats only (no footer, no own index)."""
    plan = _plan(lambda: HudiTable.open(root, listing="mdt"),
                 lambda t: MdtOnlyIndex(t, persist=False, source="mdt", mdt_columns=filter_columns(t, filt)), filt)
    assert plan.listing_source == "mdt", "the MDT listing was not used"
    c = plan.counters
    assert c.files_from_mdt > 0 and c.files_from_footers == 0 and c.files_from_index == 0, c
    return plan


def folders_and_own_index(root: Path, filt: sarg.SearchArgument) -> Plan:
    """Folder listing + the persisted own index (footers read only for files it lacks)."""
    return _plan(lambda: HudiTable.open(root), lambda t: ColumnStatsIndex(t, source="footers"), filt)


def _fmt(plan: Plan) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in plan.stages.items()) + f"; total {plan.total:.3f} s"


def _peak(fn: Callable[[], Plan]) -> tuple[float, float, Plan]:
    """(tracemalloc peak MiB, pyarrow pool peak MiB) of one run."""
    gc.collect()
    pool = pa.default_memory_pool()
    before = pool.max_memory()
    tracemalloc.start()
    plan = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, max(0, pool.max_memory() - before) / 2**20, plan


def _profile(fn: Callable[[], Any], top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    st.sort_stats("tottime").print_stats(top)
    st.sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- peer


def native_peer(root: Path) -> None:
    """hudi-rs decoding the column stats HFiles natively into Arrow (every record of every column), on a copy of
    the MDT whose commit metadata schema has its named types inlined (hudi-rs 0.5 panics converting the
    references every Hudi MDT schema has): what native decoding costs."""
    import json

    import fastavro
    from hudi import HudiTableBuilder

    from tests.hive_bridge.formats.test_hfile import _inline_named_types

    src = root / ".hoodie" / "metadata"
    tmp = Path(tempfile.mkdtemp(prefix="bench_mdt_rs_"))
    try:
        dst = tmp / "t" / ".hoodie" / "metadata"
        shutil.copytree(src, dst)
        for instant in (dst / ".hoodie" / "timeline").glob("*.deltacommit"):
            with open(instant, "rb") as fh:
                avro = fastavro.reader(fh)
                writer_schema, commits = avro.writer_schema, list(avro)
            for commit in commits:
                assert isinstance(commit, dict)
                extra: dict[str, str] = commit["extraMetadata"]
                extra["schema"] = json.dumps(_inline_named_types(json.loads(extra["schema"])))
            with open(instant, "wb") as fh:
                fastavro.writer(fh, writer_schema, commits)
        reader = HudiTableBuilder.from_base_uri(str(dst)).build().create_file_group_reader_with_options()
        t0 = time.perf_counter()
        rows = sum(reader.read_file_slice_from_paths(p.relative_to(dst).as_posix(), []).num_rows
                   for p in sorted(dst.glob("column_stats/*.hfile")))
        print(f"[peer] hudi-rs (native) decodes all {rows:,} column stats records of every column into Arrow "
              f"in {time.perf_counter() - t0:.3f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- first query


def first_query(root: Path, text: str, which: str) -> dict[str, Any]:
    """One first query, as the product runs it (``hive_bridge.pruning.snapshot``: what read_hudi, list_files,
    the data source and the handler use): ``mdt`` lists from the metadata table with statistics from it where
    it has them (``auto``), ``footers`` lists the folders and builds the footer index. Meant to be the first
    thing a fresh process does (:func:`_first_query_process`)."""
    from hive_bridge.pruning.snapshot import SnapshotCache

    filt = sarg.parse(text, SCHEMA)
    listing, source = ("mdt", "auto") if which == "mdt" else ("folders", "footers")
    t0 = time.perf_counter()
    snap = SnapshotCache().get(str(root), listing=listing, stats_source=source, persist=True)
    t1 = time.perf_counter()
    result = snap.plan(filt)
    t2 = time.perf_counter()
    c = snap.index.counters
    return {"open": t1 - t0, "plan": t2 - t1, "total": t2 - t0, "listing": snap.table.listing_source,
            "kept": sorted([s.partition_path, s.file_id] for s in result.slices),
            "files_from_mdt": c.files_from_mdt, "files_from_footers": c.files_from_footers,
            "files_from_index": c.files_from_index, "segments_written": c.segments_written,
            "columns_read": sorted(snap.index.mdt_columns_read or ())}


def _first_query_process(root: Path, text: str, which: str) -> dict[str, Any]:
    """:func:`first_query` in a fresh Python process (modules imported before the clock starts)."""
    import json
    import subprocess

    out = subprocess.run([sys.executable, __file__, "--first-query", which, "--table", str(root), "--filter", text],
                         check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    import importlib

    for module in WARM_IMPORTS:
        importlib.import_module(module)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000, help="base files of the table (default 100,000)")
    ap.add_argument("--rows", type=int, default=10, help="rows per file")
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5, help="repeated planning runs of each path")
    ap.add_argument("--keep", type=Path, default=None, help="folder to keep the table in (reused when present)")
    ap.add_argument("--profile", action="store_true", help="profile the MDT path even when it meets its target")
    ap.add_argument("--hudi-rs", action="store_true", help="also time hudi-rs listing the table through the MDT")
    ap.add_argument("--first-runs", type=int, default=5, help="fresh processes timing the MDT first query")
    ap.add_argument("--only", choices=("partition-stats",), help="run only this section")
    ap.add_argument("--first-query", choices=("mdt", "footers"), help=argparse.SUPPRESS)   # the child process
    ap.add_argument("--table", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--filter", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.first_query:
        import json

        importlib.import_module("hive_bridge.pruning.snapshot")
        print(json.dumps(first_query(args.table, args.filter, args.first_query)))
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_mdt_"))
    work.mkdir(parents=True, exist_ok=True)
    root = work / f"events_{args.files}x{args.rows}"
    print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, table {root}")
    try:
        run(root, args)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def run(root: Path, args: argparse.Namespace) -> None:
    mdt_dir = root / ".hoodie" / "metadata"
    if (mdt_dir / ".hoodie" / "hoodie.properties").is_file() and not (mdt_dir / PARTITION_STATS).is_dir():
        t0 = time.perf_counter()
        write_metadata_table(root, partitions=MDT_PARTITIONS, overwrite=True)
        print(f"[build] metadata table rewritten with partition_stats in {time.perf_counter() - t0:.1f} s")
    if not (mdt_dir / ".hoodie" / "hoodie.properties").is_file():
        shutil.rmtree(root, ignore_errors=True)
        t0 = time.perf_counter()
        build(root, args.files, args.rows, args.partitions)
        print(f"[build] {args.files:,} base files x {args.rows} rows in {args.partitions} partitions written by "
              f"HudiWriter in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        w = write_metadata_table(root, partitions=MDT_PARTITIONS)
        print(f"[build] metadata table (files + column_stats + partition_stats, {len(w.columns)} columns, "
              f"{w.column_stats_records:,} column stats records, {w.data_files:,} files listed) written in "
              f"{time.perf_counter() - t0:.1f} s: {_dir_size(mdt_dir) / 2**20:.1f} MiB on disk")
    else:
        print(f"[build] reusing the table and its metadata table ({_dir_size(mdt_dir) / 2**20:.1f} MiB)")
    ColumnStatsIndex(HudiTable.open(root)).clear()      # never indexed

    lo = (args.files // 2) * args.rows + 3
    filt = sarg.parse(f"leaf-(BETWEEN id {lo} {lo + 2 * args.rows})", SCHEMA)
    if args.only == "partition-stats":
        partition_stats_section(root, filt, args.runs)
        return
    print(f"[filter] {filt}  (a key range: the ids of 3 files)")

    # 1. first query on a never-indexed table, in fresh processes, the way a user's first query goes --------
    text = str(filt)
    mdt_firsts = []
    for _ in range(args.first_runs):
        ColumnStatsIndex(HudiTable.open(root)).clear()      # never indexed, whatever the last run left
        mdt_firsts.append(_first_query_process(root, text, "mdt"))
    first = mdt_firsts[0]
    n = first["files_from_mdt"]
    for r in mdt_firsts:
        assert r["listing"] == "mdt" and r["files_from_mdt"] == n and r["files_from_footers"] == 0, r
        assert r["columns_read"] == ["id"], r["columns_read"]
        assert r["segments_written"] == 0 and r["kept"] == first["kept"], r
    totals = sorted(r["total"] for r in mdt_firsts)
    mdt_first = statistics.median(totals)
    print(f"[first query] MDT, {args.first_runs} fresh processes (snapshot: listing from the files partition, "
          f"statistics of the filter's column from column_stats, no footer read): median {mdt_first:.3f} s "
          f"(min {totals[0]:.3f}, max {totals[-1]:.3f}); first run: open {first['open']:.3f} s, plan "
          f"{first['plan']:.3f} s; {len(first['kept'])} of {n:,} slices kept")
    ColumnStatsIndex(HudiTable.open(root)).clear()
    footers = _first_query_process(root, text, "footers")
    assert footers["files_from_footers"] == n and footers["files_from_index"] == 0, footers
    assert footers["segments_written"] > 0
    print(f"[first query] folders + building the footer index, a fresh process ({n:,} footers read, index "
          f"persisted): open {footers['open']:.3f} s, plan {footers['plan']:.3f} s; total {footers['total']:.3f} s")
    ratio_first = footers["total"] / mdt_first
    print(f"[first query] MDT {mdt_first:.3f} s vs footer index build {footers['total']:.3f} s: {ratio_first:.1f}x "
          f"faster (target >= 20x) -> {'met' if ratio_first >= 20 else 'NOT met'}")
    assert footers["kept"] == first["kept"], "the footer index and the MDT keep different slices"
    gc.collect()
    first_mdt = mdt_path(root, filt)                         # the in-process reference for the checks below
    assert [list(k) for k in first_mdt.kept] == first["kept"]

    # 2. planning, cold and repeated ------------------------------------------------------------------------
    gc.collect()
    cold_own = folders_and_own_index(root, filt)
    assert cold_own.counters.files_from_index == n and cold_own.counters.files_from_footers == 0, cold_own.counters
    print(f"[planning] folders + own index, cold (first load of the persisted index in the process): "
          f"{_fmt(cold_own)}")
    mdt_runs: list[Plan] = []
    own_runs: list[Plan] = []
    for i in range(args.runs):
        gc.collect()
        mdt_runs.append(mdt_path(root, filt))
        gc.collect()
        own_runs.append(folders_and_own_index(root, filt))
        print(f"[planning] run {i + 1}: MDT {_fmt(mdt_runs[-1])} | folders + own index {_fmt(own_runs[-1])}")
    for p in mdt_runs + own_runs + [cold_own]:
        assert p.kept == first_mdt.kept, "a planning kept other slices"
    mdt_best, mdt_med = min(p.total for p in mdt_runs), statistics.median(p.total for p in mdt_runs)
    own_best, own_med = min(p.total for p in own_runs), statistics.median(p.total for p in own_runs)
    print(f"[planning] {n:,} files, repeated ({args.runs} runs): MDT best {mdt_best:.3f} s, median {mdt_med:.3f} s "
          f"(cold {first_mdt.total:.3f} s); folders + own index best {own_best:.3f} s, median {own_med:.3f} s "
          f"(cold {cold_own.total:.3f} s)")
    speed = own_med / mdt_med
    print(f"[planning] MDT vs folders + own index: {speed:.2f}x (target: MDT <= {MDT_TARGET_S} s at 100,000 files and "
          f">= 2x faster) -> {'met' if mdt_med <= MDT_TARGET_S and speed >= 2 else 'NOT met'}")

    # 3. memory ------------------------------------------------------------------------------------------------
    for label, fn in (("MDT", lambda: mdt_path(root, filt)), ("folders + own index",
                                                             lambda: folders_and_own_index(root, filt))):
        py, arrow, plan = _peak(fn)
        assert plan.kept == first_mdt.kept
        print(f"[memory] {label}: peak Python allocations {py:.0f} MiB (tracemalloc), pyarrow pool peak "
              f"+{arrow:.0f} MiB")
    print(f"[memory] process peak RSS {_rss_mb():.0f} MiB")
    print(f"[check] every path kept the same {len(first_mdt.kept)} slices: {first_mdt.kept}")

    # 4. peers and profile -----------------------------------------------------------------------------------
    if args.hudi_rs:
        from hudi import HudiTableBuilder

        t0 = time.perf_counter()
        count = len(HudiTableBuilder.from_base_uri(str(root)).build().get_file_slices())
        print(f"[peer] hudi-rs get_file_slices() through the MDT files partition: {count:,} slices in "
              f"{time.perf_counter() - t0:.3f} s (listing only, no statistics)")
    partition_stats_section(root, filt, args.runs)
    if args.profile or mdt_med > MDT_TARGET_S or ratio_first < 20:
        print("[profile] one MDT planning under cProfile (slower than the timed runs):")
        print(_profile(lambda: mdt_path(root, filt), 25))
        if args.hudi_rs:
            native_peer(root)


if __name__ == "__main__":
    main()
