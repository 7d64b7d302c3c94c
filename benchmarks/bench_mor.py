"""Merge-on-read pruning: log-file statistics, kept slices against the ideal, pruned vs full merged reads.

A generated merge-on-read table (the test writer, table version 8 by default): `--groups` file groups of
`--rows` rows, keys clustered (each group holds a narrow `event_id` range), then three deltacommits of updates
(every group gets 1–3 log files; updates move `amount` far out of its base file's range: it becomes
`-event_id`) and one of deletes. Selective filters (at most ~2 % of the slices hold a match), on the clustered
key and on the column the updates moved. Printed:

- the statistics build: base-file footers/s and log files/s (Avro blocks decoded, statistics with Arrow);
- per filter: slices kept by hive-bridge vs the ideal (slices whose merged rows hold a match; target ≤ 1.1),
  planning time, and the pruned read against the full merged read of the same latest slices, both through the
  project's merge path (hudi-rs's file-group reader merges each slice, as `read_slices` does), same rows checked;
- the full read split into time spent reading base files alone vs merging slices with their logs;
- peak memory (RSS) of the process.

    python benchmarks/bench_mor.py [--groups 2000] [--rows 100] [--version 8] [--block-format avro]
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sarg
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.pruning import Pruner
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

SCHEMA = {"event_id": "bigint", "city": "string", "amount": "double", "ts": "bigint"}


def filters(n: int) -> list[tuple[str, pc.Expression]]:
    """(SearchArgument, the same filter on rows) pairs; `n` = total rows, so the key filters stay selective."""
    e, a = pc.field("event_id"), pc.field("amount")
    k = n // 2
    return [
        (f"leaf-(EQUALS event_id {k + 3})", e == k + 3),
        (f"leaf-(BETWEEN event_id {k} {k + n // 100})", (e >= k) & (e <= k + n // 100)),
        (f"(and leaf-(IN event_id 7 {n // 3} {n // 2 + 1}) (not leaf-(IS_NULL city)))",
         e.isin([7, n // 3, n // 2 + 1]) & pc.field("city").is_valid()),
        (f"(not leaf-(LESS_THAN_EQUALS event_id {n - n // 100}))", e > n - n // 100),
        # updated rows hold amount = -event_id: far below every base file's range [0.5 * lo, 0.5 * hi]
        (f"leaf-(BETWEEN amount {-(k + n // 200)}.0 {-k}.0)", (a >= -(k + n // 200)) & (a <= -k)),
        (f"leaf-(LESS_THAN amount {-(n - n // 100)}.0)", a < -(n - n // 100)),
        ("leaf-(EQUALS event_id -5)", e == -5),
    ]


def build(root: Path, groups: int, rows: int, version: int, block_format: str, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    n = groups * rows
    ids = pa.array(range(n), pa.int64())
    cities = pa.array(["Lima", "Osaka", "Paris", "Seoul"] * (n // 4) + ["Lima"] * (n % 4))
    data = pa.table({"event_id": ids, "city": cities, "amount": pc.multiply(pc.cast(ids, pa.float64()), 0.5),
                     "ts": pa.array([0] * n, pa.int64())})
    # `ts` orders the versions of a record (the precombine field): hudi-rs merges by it
    w = HudiWriter(root, record_key_fields=("event_id",), precombine_field="ts", rows_per_file=rows,
                   version=version, table_type="MERGE_ON_READ")
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    w.insert(data)
    times["insert"] = time.perf_counter() - t0
    # three rounds of updates: round 1 touches every group, rounds 2 and 3 about half of them; ~5 % of a
    # touched group's rows each time
    for r in range(3):
        chosen = range(groups) if r == 0 else [g for g in range(groups) if rng.random() < 0.5]
        keys = sorted({g * rows + rng.randrange(rows) for g in chosen for _ in range(max(1, rows // 20))})
        upd = pa.table({"event_id": pa.array(keys, pa.int64()),
                        "city": pa.array([rng.choice(["Lima", "Osaka", "Paris", "Seoul"]) for _ in keys]),
                        "amount": pa.array([-float(k) for k in keys], pa.float64()),
                        "ts": pa.array([r + 1] * len(keys), pa.int64())})
        t0 = time.perf_counter()
        w.upsert(upd, block_format=block_format)
        times[f"deltacommit {r + 1} ({len(keys)} updates)"] = time.perf_counter() - t0
    doomed = sorted({rng.randrange(n) for _ in range(groups // 4)})
    t0 = time.perf_counter()
    w.delete(pa.table({"event_id": pa.array(doomed, pa.int64())}))
    times[f"deltacommit 4 ({len(doomed)} deletes)"] = time.perf_counter() - t0
    return times


def merged(reader: object, s: FileSlice) -> pa.Table:
    from hive_bridge.spark import merge_with_hudi

    base = s.base_file.path if s.base_file is not None else ""
    batches = merge_with_hudi(reader, base, [lf.path for lf in s.log_files])
    return pa.Table.from_batches(batches) if batches else pa.table({})


def read_slices_arrow(reader: object, slices: list[FileSlice], expr: pc.Expression) -> tuple[int, float, float]:
    """Rows matching `expr` in the merged slices; seconds reading plain base files, seconds merging."""
    rows = 0
    reading = merging = 0.0
    for s in slices:
        t0 = time.perf_counter()
        if s.log_files or s.base_file is None:
            t = merged(reader, s)
            merging += time.perf_counter() - t0
        else:
            t = pq.read_table(s.base_file.full_path)
            reading += time.perf_counter() - t0
        if t.num_rows:
            rows += t.filter(expr).num_rows
    return rows, reading, merging


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--version", type=int, default=8, choices=(6, 8))
    ap.add_argument("--block-format", default="avro", choices=("avro", "parquet"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    from hive_bridge.spark import hudi_reader

    work = Path(tempfile.mkdtemp(prefix="hb-bench-mor-"))
    root = work / "events_mor"
    t0 = time.perf_counter()
    times = build(root, args.groups, args.rows, args.version, args.block_format, args.seed)
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    n_logs = sum(len(s.log_files) for s in slices)
    per_slice = [len(s.log_files) for s in slices]
    print(f"table: v{args.version} merge-on-read, {len(slices)} slices × {args.rows} rows, {n_logs} log files "
          f"({args.block_format} blocks; {min(per_slice)}–{max(per_slice)} per slice), built in "
          f"{time.perf_counter() - t0:.1f} s ({', '.join(f'{k} {v:.1f} s' for k, v in times.items())})")

    # the statistics build, from nothing (not persisted: every file read)
    index = ColumnStatsIndex(table, persist=False)
    t0 = time.perf_counter()
    index.table([s for s in slices if s.base_file is not None])
    t_base = time.perf_counter() - t0
    t0 = time.perf_counter()
    index.log_table(slices)
    t_logs = time.perf_counter() - t0
    assert index.last.unreadable_log_files == 0, index.errors[:3]
    print(f"statistics: {len(slices)} base footers in {t_base:.2f} s ({len(slices) / t_base:,.0f} files/s); "
          f"{n_logs} log files in {t_logs:.2f} s ({n_logs / t_logs:,.0f} log files/s)")
    # the persisted index: built once, then every query plans from it
    ColumnStatsIndex(table).load()
    ColumnStatsIndex(table).log_table(slices)
    t0 = time.perf_counter()
    pruner = Pruner(table, ColumnStatsIndex(table), slices)
    print(f"planning set-up from the persisted index (load + unions of {n_logs + len(slices)} parts): "
          f"{time.perf_counter() - t0:.3f} s")

    reader = hudi_reader(str(root))
    total_rows = args.groups * args.rows
    print(f"{'filter':56} {'kept':>5} {'ideal':>5} {'ratio':>5} {'plan ms':>8} {'pruned s':>9} {'full s':>7} "
          f"{'speed-up':>8} rows")
    ratios, speedups = [], []
    full_reading = full_merging = 0.0
    truth_cache: dict[str, pa.Table] = {}
    for text, expr in filters(total_rows):
        s = sarg.parse(text, SCHEMA)
        plan_times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            listing = pruner.run(s)
            plan_times.append(time.perf_counter() - t0)
        ideal = 0
        for sl in slices:
            key = f"{sl.partition_path}/{sl.file_id}"
            rows_of = truth_cache.get(key)
            if rows_of is None:
                rows_of = truth_cache[key] = merged(reader, sl)
            if rows_of.num_rows and rows_of.filter(expr).num_rows:
                ideal += 1
        kept_ids = {(x.partition_path, x.file_id) for x in listing.slices}
        for sl in slices:  # no lost rows: every slice with a match is kept
            rows_of = truth_cache[f"{sl.partition_path}/{sl.file_id}"]
            if rows_of.num_rows and rows_of.filter(expr).num_rows:
                assert (sl.partition_path, sl.file_id) in kept_ids, (text, sl.file_id)
        pruned_t, full_t = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            pruned_rows, _, _ = read_slices_arrow(reader, listing.slices, expr)
            pruned_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            full_rows, reading, merging = read_slices_arrow(reader, slices, expr)
            full_t.append(time.perf_counter() - t0)
        full_reading += reading
        full_merging += merging
        assert pruned_rows == full_rows, (text, pruned_rows, full_rows)
        p, f = statistics.median(pruned_t), statistics.median(full_t)
        ratio = listing.files_kept / ideal if ideal else (1.0 if listing.files_kept == 0 else float("inf"))
        ratios.append(ratio)
        speedups.append(f / p if p else float("inf"))
        print(f"{text[:56]:56} {listing.files_kept:5d} {ideal:5d} {ratio:5.2f} "
              f"{statistics.median(plan_times) * 1000:8.1f} {p:9.3f} {f:7.3f} {f / p if p else 0:7.1f}× {full_rows}")
    k = len(filters(total_rows))
    print(f"kept/ideal: max {max(ratios):.2f}, median {statistics.median(ratios):.2f}; read speed-up median "
          f"{statistics.median(speedups):.1f}×")
    print(f"the full merged read, per query: {full_reading / k:.2f} s reading base files of slices without logs, "
          f"{full_merging / k:.2f} s merging slices with logs (hudi-rs file-group reader)")
    # merging vs reading: the same slices' base files read alone, then merged with their logs
    t0 = time.perf_counter()
    base_rows = sum(pq.read_table(s.base_file.full_path).num_rows for s in slices if s.base_file is not None)
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    merged_rows = sum(merged(reader, s).num_rows for s in slices)
    t_merge = time.perf_counter() - t0
    print(f"merging vs reading, every slice: base files alone (pyarrow) {t_read:.2f} s ({base_rows} rows); "
          f"base + logs merged (hudi-rs) {t_merge:.2f} s ({merged_rows} rows): merging costs "
          f"{t_merge - t_read:.2f} s ({t_merge / t_read:.1f}× the plain read)")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
