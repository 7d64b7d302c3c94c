"""Benchmark: float proofs on merge-on-read slices with log files (``hive_bridge.pruning.float_verdicts``).

The table: a version-8 merge-on-read table written by the test writer, ``--groups`` file groups of ``--rows``
rows (a double column ``amount``: group g holds values in [10 g, 10 g + 5)), then ``--rounds`` upserts each
touching one row of every group (one Avro log file per group per round, values inside the group's range; in the
last round four groups get NaN and two a value moved above every other), then the metadata table Hudi 1.0 writes
(column statistics of base and log files: its float bounds are never trusted, apache/hudi#18754, so without
proofs every slice is kept by a float range). Filters: ``amount > X`` (the top group and the moved/NaN groups
match), ``amount < 5`` (group 0), ``amount > 1e9`` (the NaN groups only).

Each variant runs in a fresh process (the index built from the metadata table first, not timed in the plan):

- ``off``: ``HIVE_BRIDGE_FLOAT_PROOFS=0`` (what the planner did before proofs on merged slices, and before any);
- ``proven``: an empty cache folder: the first plan reads the parts (base files' column chunks, log files'
  data blocks) of the slices kept only for lack of float facts; the next plan in the same process reads nothing;
- ``proven, remembered``: a new process with the cache folder ``proven`` left: nothing read;
- ``proven, 5,000 reads``: an empty cache folder and ``HIVE_BRIDGE_FLOAT_PROOFS=5000``: every part proven in the
  first plan (the default budget, 1,000 file reads, proves a third of the 3,000 parts per plan).

Printed per filter: slices with a matching merged row (the truth: each slice's rows merged by the test writer's
merge model from the real files), slices kept, planning time; for ``proven``: files read (of them log files),
bytes read, time, and each process's peak resident memory (Linux VmHWM). A variant that drops a slice holding a
match fails the run.

Run: ``.venv/bin/python benchmarks/bench_log_float_proofs.py [--groups 1000 --rows 50 --rounds 2] [--keep DIR]``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from peak_memory import peak_mib

NAN_GROUPS = (3, 97, 401, 733)
MOVED_GROUPS = (50, 650)


def _filters(groups: int) -> list[tuple[str, str]]:
    top = 10.0 * (groups - 1)
    return [("top", f"amount > {top}"), ("bottom", "amount < 5.0"), ("huge", "amount > 1e9")]


def build(root: Path, groups: int, rows: int, rounds: int) -> None:
    from hive_bridge.testing.mdt_writer import write_metadata_table
    from hive_bridge.testing.writer import MERGE_ON_READ, HudiWriter

    writer = HudiWriter(root, version=8, table_type=MERGE_ON_READ, record_key_fields=("id",), rows_per_file=rows)
    ids = list(range(groups * rows))
    writer.insert(pa.table({"id": pa.array(ids, pa.int64()),
                            "amount": pa.array([10.0 * (i // rows) + (i % rows) * 5.0 / rows for i in ids])}))
    for r in range(rounds):
        keys = [g * rows + r % rows for g in range(groups)]
        values = [10.0 * g + 1.0 + r * 0.5 for g in range(groups)]
        if r == rounds - 1:
            for g in NAN_GROUPS:
                if g < groups:
                    values[g] = math.nan
            for g in MOVED_GROUPS:
                if g < groups:
                    values[g] = 10.0 * groups + g
        writer.upsert(pa.table({"id": pa.array(keys, pa.int64()), "amount": pa.array(values, pa.float64())}))
    write_metadata_table(root)


def _hit(v: float | None, op: str, lit: float) -> bool:
    if v is None:
        return False
    if math.isnan(v):
        return op == ">"
    return v > lit if op == ">" else v < lit


def truth(root: Path, flts: list[tuple[str, str]]) -> dict[str, set[str]]:
    """Slices (file ids) whose merged rows hold a match: NaN is above every number (Spark SQL)."""
    from hive_bridge.table.table import HudiTable
    from hive_bridge.testing.merge_model import block_filter, merge_slice

    table = HudiTable.open(root)
    ok = block_filter(table)
    out: dict[str, set[str]] = {label: set() for label, _ in flts}
    for s in table.latest_file_slices():
        merged = merge_slice(table, ok, s, None).table
        values = [] if merged is None else merged.column("amount").to_pylist()
        for label, text in flts:
            op, lit = text.split()[1], float(text.split()[2])
            if any(_hit(v, op, lit) for v in values):
                out[label].add(s.file_id)
    return out


def child(root: str, groups: int) -> None:
    import sarg
    from hive_bridge.pruning import Pruner
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable

    table = HudiTable.open(root)
    index = ColumnStatsIndex(table, persist=False)
    slices = table.latest_file_slices()
    t0 = time.perf_counter()
    index.table()
    index.log_table([s for s in slices if s.log_files])
    out: dict[str, Any] = {"index_s": time.perf_counter() - t0, "filters": {}}
    for label, text in _filters(groups):
        s = sarg.read_filter(text, {"amount": "double"})
        t0 = time.perf_counter()
        first = Pruner(table, index, slices).run(s)
        first_ms = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        again = Pruner(table, index, slices).run(s)
        out["filters"][label] = {"kept": sorted(sl.file_id for sl in first.slices), "first_ms": first_ms,
                                 "next_ms": (time.perf_counter() - t0) * 1e3, "next_kept": len(again.slices),
                                 "proofs": None if first.float_proofs is None else first.float_proofs.figures()}
    out["peak_mib"] = peak_mib()
    print(json.dumps(out))


def _run(name: str, root: Path, groups: int, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--child", str(root), "--groups", str(groups)],
                          capture_output=True, text=True, env={**os.environ, **env}, check=False)
    if proc.returncode != 0:
        sys.exit(f"bench_log_float_proofs: the {name} variant failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="folder to keep the table in (reused)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.groups)
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_log_float_proofs_"))
    root = work / f"mor_{args.groups}x{args.rows}x{args.rounds}"
    try:
        if not (root / ".hoodie" / "hoodie.properties").is_file():
            t0 = time.perf_counter()
            build(root, args.groups, args.rows, args.rounds)
            print(f"[build] {args.groups:,} file groups x {args.rows} rows, {args.rounds} log files each, metadata "
                  f"table, in {time.perf_counter() - t0:.1f} s")
        log_bytes = sum(f.stat().st_size for f in root.rglob(".*.log.*"))
        base_bytes = sum(f.stat().st_size for f in root.glob("*.parquet"))
        print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
              f"{os.getloadavg()[0]:.1f}; base files {base_bytes:,} bytes, log files {log_bytes:,} bytes")
        flts = _filters(args.groups)
        want = truth(root, flts)
        facts = str(work / "float-facts-cache")
        shutil.rmtree(facts, ignore_errors=True)
        variants = [("off", {"HIVE_BRIDGE_FLOAT_PROOFS": "0", "HIVE_BRIDGE_CACHE": facts + "-off"}),
                    ("proven", {"HIVE_BRIDGE_CACHE": facts}), ("proven, remembered", {"HIVE_BRIDGE_CACHE": facts}),
                    ("proven, 5,000 reads", {"HIVE_BRIDGE_CACHE": facts + "-5000", "HIVE_BRIDGE_FLOAT_PROOFS": "5000"})]
        shutil.rmtree(facts + "-5000", ignore_errors=True)
        results = {name: _run(name, root, args.groups, env) for name, env in variants}
        lost = False
        print(f"{'filter':<22} {'slices matching':>15} " + " ".join(f"{n:>28}" for n in results))
        for label, text in flts:
            cells = []
            for r in results.values():
                f = r["filters"][label]
                missing = len(want[label] - set(f["kept"]))
                lost |= missing > 0
                cells.append(f"{len(f['kept']):>7,} kept · {f['first_ms']:8.1f} ms" + (f" LOST {missing}"
                                                                                       if missing else ""))
            print(f"{text:<22} {len(want[label]):>15,} " + " ".join(f"{c:>28}" for c in cells))
        for name in ("proven", "proven, remembered", "proven, 5,000 reads"):
            for label, text in flts:
                f = results[name]["filters"][label]
                p = f["proofs"] or {}
                print(f"  {name} {text}: {p.get('candidates', 0):,} slices depended on the facts, "
                      f"{p.get('reads', 0):,} files read ({p.get('log_reads', 0):,} log files, "
                      f"{p.get('bytes_read', 0):,} bytes, {p.get('seconds', 0) * 1000:.1f} ms), "
                      f"{p.get('cache_hits', 0):,} remembered; {p.get('holding_nan', 0)} holding NaN; next plan "
                      f"{f['next_ms']:.1f} ms ({f['next_kept']:,} kept)")
        print("peak memory: " + ", ".join(f"{n} {r['peak_mib']:.0f} MiB" for n, r in results.items())
              + "; index from the metadata table: " + ", ".join(f"{n} {r['index_s']:.2f} s"
                                                                 for n, r in results.items())
              + f"; load average {os.getloadavg()[0]:.1f}")
        if lost:
            sys.exit("bench_log_float_proofs: a variant dropped a slice holding a match")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
