"""Benchmark: planning (listing + statistics + prune, no Spark read) at 10,000, 100,000 and 1,000,000 files.

Tables are synthesized as ``bench_table.py`` does (one commit, zero-byte base files in 100 partitions, the index
segment written in the index's own format): what a table that was indexed once looks like to a planning. For each
size, in one process:

- **floor**: ``os.scandir`` + stat of every base file in one thread (what any listing that reads sizes pays);
- **hudi-rs**: ``HudiTable.get_file_slices()`` of the same table (listing only, no statistics), best of 3;
- **hive-bridge cold**: a fresh snapshot cache: open, list, load the index, prepare the evaluator, prune one
  selective filter (``hive_bridge.pruning.snapshot``); the first query a process makes;
- **hive-bridge repeated**: the same query again through the cache (the timeline unchanged), median of 9;
- **after a commit** (largest size): a commit of 100 new (real, small) parquet files into two partitions, then
  the query again: the cache notices the new instant, lists only the two partitions its write stats name, reads
  only the 100 new footers and keeps the other partitions' prepared statistics;

with peak memory (tracemalloc's Python peak, and the process's RSS) per size. Targets (issue 17): repeated at
100,000 files <= 0.1 s; cold at 1,000,000 <= 2x the floor; repeated at 1,000,000 <= 0.5 s; re-planned after a
100-file commit <= 0.5 s. A plot of planning time against file count is written to ``--plot``
(``benchmarks/planning.png`` by default; matplotlib, a benchmark-only dependency).

Run: ``.venv/bin/python benchmarks/bench_planning.py [--sizes 10000,100000,1000000] [--keep DIR] [--plot PNG]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import _synthesize_big

import sarg
from hive_bridge.pruning.snapshot import SnapshotCache

SCHEMA = {"id": "bigint", "name": "string", "value": "double", "part": "int"}
REPEATS = 9


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _floor(path: Path) -> float:
    gc.collect()
    t0 = time.perf_counter()
    n = sum(1 for p in os.scandir(path) if p.is_dir() and not p.name.startswith(".")
            for e in os.scandir(p.path) if e.stat(follow_symlinks=False).st_size >= 0)
    assert n > 0
    return time.perf_counter() - t0


def _hudi_rs(path: Path, files: int) -> float | None:
    try:
        from hudi import HudiTableBuilder
    except ImportError:
        return None
    best = float("inf")
    for _ in range(3):
        gc.collect()
        t0 = time.perf_counter()
        n = len(HudiTableBuilder.from_base_uri(str(path)).build().get_file_slices())
        best = min(best, time.perf_counter() - t0)
        assert n >= files, n
    return best


def _query(files: int) -> sarg.SearchArgument:
    lo = files // 2
    return sarg.parse(f"leaf-(BETWEEN id {lo} {lo + 2})", SCHEMA)


def _commit_100(path: Path) -> None:
    """A commit of 100 small real parquet files into two partitions (version 6 timeline, as the synthesized
    table), its write stats in the commit metadata as Hudi writes them."""
    instant = time.strftime("%Y%m%d%H%M%S", time.gmtime()) + "500"
    hoodie = path / ".hoodie"
    stats: dict[str, list[dict[str, Any]]] = {}
    for i in range(100):
        rel = f"part={i % 2}"
        part = path / rel
        name = f"{uuid.uuid4()}-0_0-2-2_{instant}.parquet"
        ids = list(range(10**9 + i * 10, 10**9 + i * 10 + 10))
        pq.write_table(pa.table({
            "_hoodie_commit_time": pa.array([instant] * 10), "_hoodie_commit_seqno": pa.array(["x"] * 10),
            "_hoodie_record_key": pa.array([str(v) for v in ids]), "_hoodie_partition_path": pa.array(["p"] * 10),
            "_hoodie_file_name": pa.array([name] * 10), "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"n{v}" for v in ids]), "value": pa.array([v * 0.5 for v in ids]),
            "part": pa.array([i % 2] * 10, pa.int32())}), part / name)
        stats.setdefault(rel, []).append({
            "fileId": name.split("_")[0], "path": f"{rel}/{name}", "prevCommit": "null", "numWrites": 10,
            "numInserts": 10, "partitionPath": rel, "fileSizeInBytes": (part / name).stat().st_size})
    (hoodie / f"{instant}.commit.requested").write_bytes(b"")
    (hoodie / f"{instant}.inflight").write_text("{}")
    schema = json.loads((hoodie / "20240101000000000.commit").read_text())["extraMetadata"]["schema"]
    (hoodie / f"{instant}.commit").write_text(json.dumps({
        "partitionToWriteStats": stats, "compacted": False, "operationType": "INSERT",
        "extraMetadata": {"schema": schema}}))


def run_size(root: Path, files: int, commit: bool) -> dict[str, Any]:
    path = root / f"t{files}"
    if not (path / ".hoodie").is_dir():
        t0 = time.perf_counter()
        _synthesize_big(path, files, 100)
        print(f"[{files:,}] synthesized in {time.perf_counter() - t0:.1f} s")
    else:
        print(f"[{files:,}] reusing {path}")
    out: dict[str, Any] = {"files": files}
    out["floor"] = min(_floor(path) for _ in range(3))
    out["hudi-rs"] = _hudi_rs(path, files)
    filt = _query(files)
    gc.collect()
    tracemalloc.start()
    SnapshotCache().get(str(path)).plan(filt)      # memory only (tracemalloc slows Python down several times)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out["peak_mb"] = peak / 2**20
    gc.collect()
    cache = SnapshotCache()
    t0 = time.perf_counter()
    result = cache.get(str(path)).plan(filt)
    out["cold"] = time.perf_counter() - t0
    kept = result.files_kept
    assert result.files_total >= files and 1 <= kept <= 5, (result.files_total, kept)
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        again = cache.get(str(path)).plan(filt)
        times.append(time.perf_counter() - t0)
        assert again.files_kept == kept
    out["repeated"] = statistics.median(times)
    out["repeated_best"] = min(times)
    assert cache.stats.opened == 1 and cache.stats.reused == REPEATS, cache.stats
    if commit:
        _commit_100(path)
        full_before = gc.get_stats()[2]["collections"]
        t0, c0 = time.perf_counter(), time.process_time()
        snap = cache.get(str(path))
        after = snap.plan(filt)
        out["after_commit"] = time.perf_counter() - t0
        out["after_commit_cpu"] = time.process_time() - c0
        out["after_commit_full_gc"] = gc.get_stats()[2]["collections"] - full_before
        t0 = time.perf_counter()
        snap.plan(filt)                          # the next query pays what the collector left for later
        out["after_commit_next"] = time.perf_counter() - t0
        assert snap.origin == "followed" and after.files_total == result.files_total + 100, after.files_total
        assert snap.index.last.files_from_footers == 100, snap.index.last
    out["rss_mb"] = _rss_mb()
    print(f"[{files:,}] floor (scandir+stat) {out['floor']:.3f} s | hudi-rs get_file_slices "
          + (f"{out['hudi-rs']:.3f} s" if out["hudi-rs"] is not None else "n/a")
          + f" | hive-bridge cold {out['cold']:.3f} s ({out['cold'] / out['floor']:.2f}x the floor), repeated "
          f"median {out['repeated'] * 1000:.1f} ms (best {out['repeated_best'] * 1000:.1f} ms)"
          + (f", after a 100-file commit {out['after_commit']:.3f} s (CPU {out['after_commit_cpu']:.3f} s, "
             f"{out['after_commit_full_gc']} full collections; the query after it "
             f"{out['after_commit_next'] * 1000:.1f} ms)" if commit else "")
          + f" | peak Python {out['peak_mb']:.0f} MiB, RSS {out['rss_mb']:.0f} MiB")
    return out


def _targets(rows: list[dict[str, Any]]) -> None:
    by = {r["files"]: r for r in rows}
    checks = []
    if 100_000 in by:
        checks.append(("repeated at 100,000 files <= 0.1 s", by[100_000]["repeated"] <= 0.1))
    if 1_000_000 in by:
        big = by[1_000_000]
        checks.append(("cold at 1,000,000 files <= 2x the floor", big["cold"] <= 2 * big["floor"]))
        checks.append(("repeated at 1,000,000 files <= 0.5 s", big["repeated"] <= 0.5))
        if "after_commit" in big:
            checks.append(("re-planned after a 100-file commit <= 0.5 s", big["after_commit"] <= 0.5))
    for what, ok in checks:
        print(f"[target] {what}: {'met' if ok else 'NOT met'}")


def _plot(rows: list[dict[str, Any]], out: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("[plot] matplotlib is not installed (pip install -e '.[bench]'): no plot")
        return
    xs = [r["files"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = [("hive-bridge cold", "cold", "o-"), ("hive-bridge repeated", "repeated", "s-"),
              ("hudi-rs get_file_slices", "hudi-rs", "^--"), ("scandir + stat floor", "floor", "k:")]
    for label, key, style in series:
        pts = [(r["files"], r[key]) for r in rows if r.get(key) is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(xs, [f"{x:,}" for x in xs])
    ax.set_xlabel("files in the table")
    ax.set_ylabel("planning time (s)")
    ax.set_title("Planning one selective query (2 cores)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"[plot] {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--keep", type=Path, help="keep the tables in this folder and reuse them")
    ap.add_argument("--plot", type=Path, default=Path(__file__).resolve().parent / "planning.png")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench_planning_"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    rows = []
    try:
        for files in sizes:
            rows.append(run_size(root, files, commit=files == max(sizes)))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    _targets(rows)
    _plot(rows, args.plot)


if __name__ == "__main__":
    main()
