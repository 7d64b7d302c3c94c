"""Benchmark: what NaN counts let the pruner skip, on bench_peers.py's table.

The table (``bench_peers.build``: ``--files`` files x ``--rows`` rows, a double column ``amount`` with -0.0 in ten
files and NaN in four) and its four ``amount`` filters (``= 0.0``, ``= -0.0``, ``NOT amount <= X``, ``= NaN``).
Each variant runs in a fresh process that forgets the persisted index, builds it (timed) and plans every filter:

- ``baseline`` (with ``--baseline DIR``): another checkout's code (e.g. before NaN counts);
- ``footer``: NaN counts from the footer only; the table's files (written by pyarrow) carry none; float proofs off
  (``HIVE_BRIDGE_FLOAT_PROOFS=0``: what the planner did before them);
- ``proven``: the default: the files kept only for lack of the ``amount`` column's facts get that column read
  (``hive_bridge.pruning.float_proofs``) in the first planning (an empty cache folder), remembered for the next;
  the figures: files proven free of NaN / holding NaN, column bytes read, time of the first and second planning;
- ``proven, remembered``: a new process with the cache folder ``proven`` left: nothing read;
- ``counted``: ``HIVE_BRIDGE_COUNT_NANS=true``: counted in the values when the index reads the files;
- ``footer with counts``: a copy of the table whose footers carry ``Statistics.nan_count`` (as parquet-java
  writes them; ``hive_bridge.testing.parquet_nan``), counting off.

The truth: the files holding a matching row (Spark SQL's semantics: NaN equals NaN and sorts above every
number, -0.0 = 0.0), computed with pyarrow from every file's values; every variant must keep them all.

Run: ``.venv/bin/python benchmarks/bench_nan_counts.py [--files 10000 --rows 100] [--keep DIR] [--baseline DIR]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

# the code measured: this checkout's, or (a baseline variant) another's
sys.path.insert(0, os.environ.get("BENCH_NAN_CODE") or str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_peers import Layout, build, filters


def _amount_filters(layout: Layout) -> list[tuple[str, str]]:
    return [(f.label, f.text) for f in filters(layout) if "amount" in f.text]


def _matches(text: str, values: pa.ChunkedArray) -> bool:
    """Whether a row of ``values`` makes a one-leaf ``amount`` filter true, as Spark SQL judges it."""
    import sarg

    s = sarg.parse(text, {"amount": "double"})
    leaf = s.leaves[0]
    x = float(leaf.literal.value if hasattr(leaf.literal, "value") else leaf.literal)
    nan = pc.fill_null(pc.is_nan(values), False)
    if leaf.operator.name == "EQUALS":
        hit = nan if math.isnan(x) else pc.fill_null(pc.equal(values, x), False)
    elif leaf.operator.name == "LESS_THAN_EQUALS":    # under NOT: amount > x, NaN included
        hit = pc.or_(pc.fill_null(pc.greater(values, x), False), nan)
    else:
        raise SystemExit(f"bench_nan_counts: no truth for {text}")
    return bool(pc.any(hit).as_py())


def child(table_path: str) -> None:
    import sarg
    from hive_bridge.pruning import Pruner
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable

    layout = Layout(int(os.environ["BENCH_NAN_FILES"]), int(os.environ["BENCH_NAN_ROWS"]))
    table = HudiTable.open(table_path)
    index = ColumnStatsIndex(table)
    index.clear()
    t0 = time.perf_counter()
    index.load()
    build_s = time.perf_counter() - t0
    out: dict[str, Any] = {"build_s": build_s, "filters": {}}
    schema = {"event_id": "bigint", "city": "string", "amount": "double"}
    for label, text in _amount_filters(layout):
        s = sarg.parse(text, schema)
        t0 = time.perf_counter()
        pruner = Pruner(table, index, table.latest_file_slices())
        first = pruner.run(s)                           # proofs (if any) read here
        first_ms = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        result = Pruner(table, index, table.latest_file_slices()).run(s)   # a new planning: facts remembered
        out["filters"][label] = {"kept": sorted(sl.base_file.name for sl in result.slices),
                                 "ms": (time.perf_counter() - t0) * 1e3, "first_ms": first_ms,
                                 "first_kept": first.files_kept,
                                 "proofs": None if first.float_proofs is None else first.float_proofs.figures()}
    print(json.dumps(out))


def _run(name: str, table: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    full = {**os.environ, "BENCH_NAN_FILES": str(args.files), "BENCH_NAN_ROWS": str(args.rows), **env}
    proc = subprocess.run([sys.executable, __file__, "--child", str(table)], capture_output=True, text=True,
                          env=full, check=False)
    if proc.returncode != 0:
        sys.exit(f"bench_nan_counts: the {name} variant failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--keep", type=Path, default=None, help="folder to keep the tables in (reused)")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout, run as the first variant")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    from hive_bridge.table.table import HudiTable
    from hive_bridge.testing.parquet_nan import give_base_files_nan_counts

    layout = Layout(args.files, args.rows)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_nan_counts_"))
    plain, counted = work / f"peers_{args.files}x{args.rows}", work / f"peers_{args.files}x{args.rows}_nan_footers"
    try:
        if not (plain / ".hoodie" / "hoodie.properties").is_file():
            t0 = time.perf_counter()
            build(plain, layout)
            print(f"[build] {args.files:,} files x {args.rows} rows in {time.perf_counter() - t0:.1f} s")
        if not (counted / ".hoodie" / "hoodie.properties").is_file():
            shutil.copytree(plain, counted)
            give_base_files_nan_counts(counted)
        print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.1f}")
        # the truth: the files holding a matching row
        flts = _amount_filters(layout)
        truth: dict[str, set[str]] = {label: set() for label, _ in flts}
        for s in HudiTable.open(plain).latest_file_slices():
            values = pq.read_table(s.base_file.full_path, columns=["amount"]).column("amount")
            for label, text in flts:
                if _matches(text, values):
                    truth[label].add(s.base_file.name)
        variants: list[tuple[str, Path, dict[str, str]]] = []
        if args.baseline is not None:
            variants.append(("baseline", plain, {"BENCH_NAN_CODE": str(args.baseline)}))
        facts = str(work / "float-facts-cache")
        shutil.rmtree(facts, ignore_errors=True)
        variants += [("footer", plain, {"HIVE_BRIDGE_COUNT_NANS": "false", "HIVE_BRIDGE_FLOAT_PROOFS": "0"}),
                     ("proven", plain, {"HIVE_BRIDGE_COUNT_NANS": "false", "HIVE_BRIDGE_CACHE": facts}),
                     ("proven, remembered", plain, {"HIVE_BRIDGE_COUNT_NANS": "false", "HIVE_BRIDGE_CACHE": facts}),
                     ("counted", plain, {"HIVE_BRIDGE_COUNT_NANS": "true", "HIVE_BRIDGE_FLOAT_PROOFS": "0"}),
                     ("footer with counts", counted, {"HIVE_BRIDGE_COUNT_NANS": "false",
                                                      "HIVE_BRIDGE_FLOAT_PROOFS": "0"})]
        results = {name: _run(name, table, args, env) for name, table, env in variants}
        print(f"{'filter':<16} {'files with a match':>18} " + " ".join(f"{n:>20}" for n in results))
        lost = False
        for label, _text in flts:
            cells = []
            for r in results.values():
                kept = set(r["filters"][label]["kept"])
                missing = len(truth[label] - kept)
                lost |= missing > 0
                cells.append(f"{len(kept):>7,} · {r['filters'][label]['ms']:6.1f} ms" + (f" LOST {missing}"
                                                                                         if missing else ""))
            print(f"{label:<16} {len(truth[label]):>18,} " + " ".join(f"{c:>20}" for c in cells))
        for name in ("proven", "proven, remembered"):
            for label, _text in flts:
                f = results[name]["filters"][label]
                p = f["proofs"] or {}
                print(f"  {name} {label}: first planning {f['first_kept']:,} kept in {f['first_ms']:.1f} ms, next "
                      f"{f['ms']:.1f} ms; "
                      f"{p.get('candidates', 0):,} files depended on the facts, {p.get('proven_nan_free', 0):,} "
                      f"proven free of NaN, {p.get('holding_nan', 0):,} holding NaN, {p.get('reads', 0):,} column "
                      f"reads ({p.get('bytes_read', 0):,} bytes, {p.get('seconds', 0) * 1000:.1f} ms), "
                      f"{p.get('cache_hits', 0):,} remembered, {p.get('over_budget', 0):,} past the budget")
        print("index build: " + ", ".join(f"{n} {r['build_s']:.2f} s" for n, r in results.items())
              + f"; load average {os.getloadavg()[0]:.1f}")
        if lost:
            sys.exit("bench_nan_counts: a variant lost files with a matching row")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
