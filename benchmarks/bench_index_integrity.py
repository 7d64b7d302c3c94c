"""Benchmark: what verifying a segment of the column-statistics index costs on load.

A synthetic segment of ``--rows`` files and ``--leaves`` columns of mixed types (int64, string, double, decimal,
date, timestamp, bool: the five or six statistics columns each, as the index writes them) is written twice: sealed
(the current format) and as the previous format wrote it (the Arrow IPC file alone). Timed, median of ``--runs``
(the files in the page cache, as a load right after a build finds them; CPU time of the process, all threads):

- ``before``: the previous load — the IPC file memory-mapped and read, then ``validate_segment`` (layout, counts);
- ``after``: ``read_segment`` — checksum of every byte, then the same read, Arrow's full validation, the value
  checks (no min above its max, no negative count or size) and ``validate_segment``;
- the parts of the difference: the XXH3-128 digest alone, ``Table.validate(full=True)`` alone, the bound checks;
- for the choice of digest: XXH3-128, BLAKE2b and SHA-256 of the same bytes.

Run: ``.venv/bin/python benchmarks/bench_index_integrity.py [--rows 100000] [--leaves 70] [--runs 7]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import xxhash

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive_bridge.formats.parquet_footer import StatsLeaf
from hive_bridge.stats.contract import bound_columns, has_nan_count
from hive_bridge.stats.integrity import check_values, unseal
from hive_bridge.stats.rows import FORMAT_KEY, FORMAT_VERSION, stats_schema
from hive_bridge.stats.segments import read_segment, segment_bytes, validate_segment, write_segment_to

TYPES = [pa.int64(), pa.string(), pa.float64(), pa.decimal128(12, 2), pa.date32(), pa.timestamp("us"), pa.bool_()]


def _bounds(typ: pa.DataType, n: int) -> tuple[pa.Array, pa.Array]:
    lo = list(range(n))
    if pa.types.is_string(typ):
        return pa.array([f"v{i:09d}" for i in lo]), pa.array([f"w{i:09d}" for i in lo])
    if pa.types.is_floating(typ):
        return pa.array([i * 0.5 for i in lo]), pa.array([i * 0.5 + 1 for i in lo])
    if pa.types.is_decimal(typ):
        return pa.array([Decimal(i) / 100 for i in lo], typ), pa.array([Decimal(i + 7) / 100 for i in lo], typ)
    if pa.types.is_date(typ):
        base = dt.date(2020, 1, 1)
        return (pa.array([base + dt.timedelta(days=i % 1000) for i in lo], typ),
                pa.array([base + dt.timedelta(days=i % 1000 + 3) for i in lo], typ))
    if pa.types.is_timestamp(typ):
        return pa.array([i * 10**6 for i in lo], pa.int64()).cast(typ), \
            pa.array([(i + 60) * 10**6 for i in lo], pa.int64()).cast(typ)
    if pa.types.is_boolean(typ):
        return pa.array([False] * n), pa.array([i % 2 == 0 for i in lo])
    return pa.array(lo, pa.int64()), pa.array([i + 100 for i in lo], pa.int64())


def synthetic_segment(rows: int, leaves: int) -> pa.Table:
    target = [StatsLeaf(f"c{k:03d}", TYPES[k % len(TYPES)]) for k in range(leaves)]
    cols: dict[str, pa.Array] = {
        "path": pa.array([f"part={i % 100}/{i:08d}-0_0-1-1_20240101000000000.parquet" for i in range(rows)]),
        "partition": pa.array([f"part={i % 100}" for i in range(rows)]),
        "file_size": pa.array([4_000_000 + i for i in range(rows)], pa.int64()),
        "instant": pa.array(["20240101000000000"] * rows), "num_rows": pa.array([1000] * rows, pa.int64()),
    }
    for leaf in target:
        lo, hi = _bounds(leaf.type, rows)
        nans = pa.array([0] * rows, pa.int64()) if has_nan_count(leaf.type) else None
        cols.update(bound_columns(leaf.name, leaf.type, lo, hi, pa.array([i % 5 for i in range(rows)], pa.int64()),
                                  nan_counts=nans))
    table = pa.table(cols).cast(stats_schema(target, with_has_log_files=False))
    return table.replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})


def _median(fn: Callable[[], object], runs: int) -> float:
    """Median CPU time of the process (every thread: Arrow decompresses on its pool) over ``runs`` calls: on a
    shared machine wall time mostly measures the neighbours."""
    times = []
    for _ in range(runs):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--leaves", type=int, default=70)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, xxhash {xxhash.VERSION}, {os.cpu_count()} "
          f"CPUs, load average {os.getloadavg()[0]:.1f}")
    table = synthetic_segment(args.rows, args.leaves)
    with tempfile.TemporaryDirectory(prefix="bench_integrity_") as tmp:
        sealed, plain = Path(tmp) / "seg-sealed.arrow", Path(tmp) / "seg-plain.arrow"
        sealed.write_bytes(segment_bytes(table))
        with pa.OSFile(str(plain), "wb") as sink:
            write_segment_to(sink, table)
        print(f"segment: {args.rows:,} rows, {table.num_columns} columns, {sealed.stat().st_size / 2**20:.1f} MiB "
              f"on disk (lz4), {table.nbytes / 2**20:.1f} MiB in memory")

        def before() -> pa.Table:
            with pa.memory_map(str(plain), "r") as source:
                seg = pa.ipc.open_file(source).read_all()
            validate_segment(seg, str(plain))
            return seg

        def after() -> pa.Table:
            return read_segment(sealed)

        assert before().equals(after())
        with pa.memory_map(str(sealed), "r") as source:
            data = source.read_buffer()
            body = unseal(data, "x")
            t_before, t_after = _median(before, args.runs), _median(after, args.runs)
            t_digest = _median(lambda: unseal(data, "x"), args.runs)
            loaded = after()
            t_full = _median(lambda: loaded.validate(full=True), args.runs)
            t_values = _median(lambda: check_values(loaded, "x"), args.runs) - t_full
            t_xxh = _median(lambda: xxhash.xxh3_128_digest(body), args.runs)
            t_blake = _median(lambda: hashlib.blake2b(body).digest(), args.runs)
            t_sha = _median(lambda: hashlib.sha256(body).digest(), args.runs)
        mb = body.size / 2**20
        print(f"CPU time, load average {os.getloadavg()[0]:.1f}")
        print(f"load before (read + layout checks): {t_before * 1000:.1f} ms; after (checksum + read + full "
              f"validation + value checks + layout checks): {t_after * 1000:.1f} ms; +{(t_after - t_before) * 1000:.1f}"
              f" ms ({t_after / t_before:.2f}x); medians of {args.runs}")
        print(f"  of which: checksum {t_digest * 1000:.1f} ms, validate(full=True) {t_full * 1000:.1f} ms, bound and "
              f"count checks {t_values * 1000:.1f} ms")
        print(f"digest of {mb:.1f} MiB: XXH3-128 {t_xxh * 1000:.2f} ms ({mb / t_xxh / 1024:.1f} GiB/s), BLAKE2b "
              f"{t_blake * 1000:.1f} ms ({mb / t_blake / 1024:.2f} GiB/s), SHA-256 {t_sha * 1000:.1f} ms "
              f"({mb / t_sha / 1024:.2f} GiB/s)")


if __name__ == "__main__":
    main()
