"""File pruning speed: the vectorized evaluator against PyIceberg 0.12's inclusive metrics evaluator.

1,000,000 files x 5 columns of statistics (int64, float64, string, timestamp UTC, decimal(12,2)) in the
statistics-table layout of hive_bridge.stats.contract; five filters: equality, a timestamp range, IN of 10 strings,
``(a AND b) OR c`` and NOT of a range. For each filter: the vectorized evaluator's median files/second (full
TruthValue semantics: three-valued verdicts, truth codes, kept-because-unknown), then PyIceberg's
``_InclusiveMetricsEvaluator`` on the equivalent expression over DataFile objects built from the same
statistics; the two keep sets must be identical (asserted). Prints times and peak memory.

    .venv/bin/python benchmarks/bench_pruning.py [--files N] [--iceberg-files N] [--reps N]

"one-shot" is ``prune(expr, pyarrow_table)`` (reads the statistics columns it needs, then judges); "prepared" is
``prune(expr, StatsTable(table))`` reused across calls (the columns are read once).
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sarg
from hive_bridge.filters.expression import translate
from hive_bridge.pruning.vectorized import StatsTable, prune
from sarg import Timestamp, Type

T0 = dt.datetime(2023, 1, 1)
T0_MICROS = int((T0 - dt.datetime(1970, 1, 1)).total_seconds()) * 1_000_000
DAY_MICROS = 86_400 * 1_000_000


def make_stats(n: int, seed: int = 7) -> pa.Table:
    """Random but plausible statistics for n files."""
    counter = iter(range(seed, seed + 100))

    def rnd() -> pa.Array:
        return pc.random(n, initializer=next(counter))

    def ints(scale: float) -> pa.Array:
        return pc.cast(pc.floor(pc.multiply(rnd(), scale)), pa.int64())

    def maybe_null(arr: pa.Array, rate: float) -> pa.Array:
        return pc.if_else(pc.less(rnd(), rate), pa.scalar(None, arr.type), arr)

    num_rows = pc.add(ints(99_000), 1_000)
    a_min = ints(1e9)
    a_max = pc.add(a_min, ints(2e6))
    b_min = pc.multiply(rnd(), 1000.0)
    b_max = pc.add(b_min, pc.multiply(rnd(), 20.0))
    c_lo = ints(1e8)
    c_hi = pc.add(c_lo, ints(2e5))

    def user(x: pa.Array) -> pa.Array:
        return pc.binary_join_element_wise("user-", pc.utf8_lpad(pc.cast(x, pa.string()), 9, "0"), "")

    d_min = pc.add(ints(365 * DAY_MICROS), T0_MICROS)
    d_max = pc.add(d_min, ints(DAY_MICROS))
    e_cents = ints(1e8)
    e_min = pa.array([Decimal(v).scaleb(-2) for v in e_cents.to_pylist()], pa.decimal128(12, 2))
    e_max = pa.array([Decimal(v).scaleb(-2) for v in pc.add(e_cents, ints(50_000)).to_pylist()],
                     pa.decimal128(12, 2))
    data: dict[str, Any] = {
        "path": pc.binary_join_element_wise("p/f-", pc.cast(ints(1e12), pa.string()), ".parquet"),
        "partition": pa.array([""] * n, pa.string()),
        "file_size": ints(1e8),
        "instant": pa.array(["20240101000000000"] * n, pa.string()),
        "num_rows": num_rows,
        "has_log_files": pa.array([False] * n, pa.bool_()),
    }
    ts = pa.timestamp("us", "UTC")
    columns = {
        "a": (a_min, a_max), "b": (b_min, b_max), "c": (user(c_lo), user(c_hi)),
        "d": (d_min.view(ts), d_max.view(ts)), "e": (e_min, e_max),
    }
    for name, (lo, hi) in columns.items():
        data[f"{name}::min"] = maybe_null(lo, 0.002)
        data[f"{name}::max"] = maybe_null(hi, 0.002)
        nc = pc.if_else(pc.less(rnd(), 0.7), 0, ints(10))
        data[f"{name}::null_count"] = maybe_null(nc, 0.01)
        data[f"{name}::min_exact"] = pa.array([True] * n, pa.bool_()) if name == "c" else pa.nulls(n, pa.bool_())
        data[f"{name}::max_exact"] = data[f"{name}::min_exact"]
        if name == "b":
            data["b::nan_count"] = pa.array([0] * n, pa.int64())
    return pa.table(data)


def filters() -> list[tuple[str, sarg.SearchArgument, Any]]:
    """(name, SearchArgument, equivalent PyIceberg expression)."""
    from pyiceberg.expressions import (
        And,
        EqualTo,
        GreaterThan,
        GreaterThanOrEqual,
        In,
        LessThan,
        LessThanOrEqual,
        Not,
        Or,
    )

    out: list[tuple[str, sarg.SearchArgument, Any]] = []
    out.append(("equality a = 500000000", sarg.builder().equals("a", Type.LONG, 500_000_000).build(),
                EqualTo("a", 500_000_000)))
    t1, t2 = T0 + dt.timedelta(days=100), T0 + dt.timedelta(days=103)
    s = (sarg.builder().start_and().start_not().less_than("d", Type.TIMESTAMP, Timestamp.from_datetime(t1)).end()
         .less_than("d", Type.TIMESTAMP, Timestamp.from_datetime(t2)).end().build())
    m1 = T0_MICROS + 100 * DAY_MICROS
    m2 = T0_MICROS + 103 * DAY_MICROS
    out.append(("range d in [t1, t2)", s, And(GreaterThanOrEqual("d", m1), LessThan("d", m2))))
    words = [f"user-{v:09d}" for v in range(5_000_000, 100_000_000, 9_500_000)][:10]
    out.append(("IN of 10 strings", sarg.builder().in_("c", Type.STRING, *words).build(), In("c", set(words))))
    s = (sarg.builder().start_or().start_and().less_than("a", Type.LONG, 20_000_000)
         .start_not().less_than_equals("b", Type.FLOAT, 500.0).end().end()
         .equals("c", Type.STRING, "user-050000000").end().build())
    out.append(("(a AND b) OR c", s, Or(And(LessThan("a", 20_000_000), GreaterThan("b", 500.0)),
                                        EqualTo("c", "user-050000000"))))
    lo, hi = Decimal("100000.00"), Decimal("900000.00")
    s = sarg.builder().start_not().between("e", Type.DECIMAL, lo, hi).end().build()
    out.append(("NOT (e BETWEEN lo AND hi)", s,
                Not(And(GreaterThanOrEqual("e", lo), LessThanOrEqual("e", hi)))))
    return out


def iceberg_files(table: pa.Table, limit: int) -> tuple[Any, list[Any]]:
    """PyIceberg schema and DataFile objects carrying the same statistics as the first ``limit`` rows."""
    from pyiceberg.conversions import to_bytes
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyiceberg.types import DecimalType, DoubleType, LongType, NestedField, StringType, TimestamptzType

    types = {"a": LongType(), "b": DoubleType(), "c": StringType(), "d": TimestamptzType(),
             "e": DecimalType(12, 2)}
    schema = Schema(*(NestedField(i + 1, name, typ, required=False) for i, (name, typ) in enumerate(types.items())))
    t = table.slice(0, limit)

    def col(name: str) -> list[Any]:
        arr = t.column(name)
        if pa.types.is_timestamp(arr.type):
            arr = pc.cast(arr, pa.int64())
        return arr.to_pylist()  # type: ignore[no-any-return]

    rows = col("num_rows")
    paths = col("path")
    per = {name: (col(f"{name}::min"), col(f"{name}::max"), col(f"{name}::null_count")) for name in types}
    nan = col("b::nan_count")
    files = []
    for i in range(t.num_rows):
        lower: dict[int, bytes] = {}
        upper: dict[int, bytes] = {}
        nulls: dict[int, int] = {}
        for fid, (name, typ) in enumerate(types.items(), start=1):
            lo, hi, nc = per[name][0][i], per[name][1][i], per[name][2][i]
            if lo is not None:
                lower[fid] = to_bytes(typ, lo)
            if hi is not None:
                upper[fid] = to_bytes(typ, hi)
            if nc is not None:
                nulls[fid] = nc
        files.append(DataFile.from_args(
            content=DataFileContent.DATA, file_path=paths[i], file_format=FileFormat.PARQUET, partition=Record(),
            record_count=rows[i], file_size_in_bytes=1, value_counts={f: rows[i] for f in range(1, 6)},
            null_value_counts=nulls, nan_value_counts={2: nan[i]}, lower_bounds=lower, upper_bounds=upper))
    return schema, files


def timed(fn: Callable[[], Any], reps: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--iceberg-files", type=int, default=200_000,
                        help="how many of the same files PyIceberg evaluates (its keep set is compared on these; "
                             "building 1,000,000 DataFile objects alone takes minutes)")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args(argv)
    n = args.files
    ice_n = min(n, args.iceberg_files)

    start = time.perf_counter()
    table = make_stats(n)
    print(f"statistics: {n:,} files x 5 columns, {table.nbytes / 2**20:.0f} MiB in arrow, "
          f"made in {time.perf_counter() - start:.1f} s")
    pool = pa.default_memory_pool()

    cases = filters()
    exprs = [translate(s) for _, s, _ in cases]
    cold: list[float] = []
    for expr in exprs:  # one-shot: a fresh table each time, so every statistics column is read anew
        start = time.perf_counter()
        prune(expr, table)
        cold.append(time.perf_counter() - start)
    start = time.perf_counter()
    prepared = StatsTable(table).prepare_all()
    print(f"StatsTable.prepare_all (read the 5 statistics columns once): {(time.perf_counter() - start) * 1000:.0f} ms")

    rates: list[float] = []
    results = []
    print(f"\n{'filter':28} {'one-shot':>10} {'prepared':>10} {'files/s':>10} {'kept':>9} {'unknown':>8}")
    for (name, _, _), expr, first in zip(cases, exprs, cold, strict=True):
        secs, result = timed(lambda e=expr: prune(e, prepared), args.reps)
        rates.append(n / secs)
        results.append(result)
        print(f"{name:28} {first * 1000:7.1f} ms {secs * 1000:7.1f} ms {n / secs / 1e6:8.1f} M {result.kept:9,} "
              f"{result.kept_because_unknown:8,}")
    median_rate = statistics.median(rates)
    print(f"median (prepared): {median_rate / 1e6:.1f} million files/s (target >= 20); "
          f"median one-shot: {n / statistics.median(cold) / 1e6:.1f} million files/s")
    start = time.perf_counter()
    ranked = StatsTable(table, rank_strings=True)
    ranked.column("c")
    rank_secs = time.perf_counter() - start
    in_expr = exprs[2]
    secs, ranked_result = timed(lambda: prune(in_expr, ranked), args.reps)
    assert ranked_result.keep.to_pylist() == results[2].keep.to_pylist()
    print(f"IN of 10 strings with rank_strings=True: {secs * 1000:.1f} ms ({n / secs / 1e6:.1f} M files/s) "
          f"after a one-time {rank_secs:.1f} s ranking of the string bounds; same keep set")

    print(f"\nPyIceberg 0.12 _InclusiveMetricsEvaluator over {ice_n:,} DataFile objects")
    from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator

    start = time.perf_counter()
    schema, files = iceberg_files(table, ice_n)
    print(f"DataFile objects built in {time.perf_counter() - start:.1f} s")
    ratios = []
    print(f"{'filter':32} {'pyiceberg':>14} {'files/s':>14} {'speedup':>9} {'same keep set':>14}")
    for (name, _, ice_expr), result, rate in zip(cases, results, rates, strict=True):
        evaluator = _InclusiveMetricsEvaluator(schema, ice_expr)
        start = time.perf_counter()
        ice_keep = [evaluator.eval(f) for f in files]
        secs = time.perf_counter() - start
        ours = result.keep.slice(0, ice_n).to_pylist()
        same = ours == ice_keep
        ice_rate = ice_n / secs
        ratios.append(rate / ice_rate)
        print(f"{name:32} {secs * 1000:11.0f} ms {ice_rate / 1e6:11.2f} M {rate / ice_rate:8.0f}x {same!s:>14}")
        if not same:
            diff = [i for i, (x, y) in enumerate(zip(ours, ice_keep, strict=True)) if x != y][:5]
            print(f"  keep sets differ at files {diff}: {[result.reason(i) for i in diff[:2]]}")
        assert same, f"keep sets differ for {name}"
    print(f"\nspeedup over PyIceberg: median {statistics.median(ratios):.0f}x, min {min(ratios):.0f}x "
          f"(target >= 100x); keep sets identical for all {len(cases)} filters")
    print(f"peak memory: RSS {peak_rss_mb():.0f} MiB, arrow pool peak {pool.max_memory() / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
