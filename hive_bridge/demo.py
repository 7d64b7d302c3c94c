"""``hive-bridge demo``: an embedded sample Hudi table, a sample log in real Spark/Hive formats, the pruning
report, and one query through Spark pruned and unpruned.

The table is built once into a cache folder (``$HIVE_BRIDGE_CACHE`` or ``~/.cache/hive-bridge``): 1,000 base
files of 1,000 events each, hive-style partitioned by ``day``, with ``event_id`` clustered (each file holds a
narrow range), as an ingestion job writes them.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
from rich.console import Console

DEMO_VERSION = "v1"
FILES = 1000
ROWS_PER_FILE = 1000
DAYS = 10
CITIES = ["Amsterdam", "Berlin", "Chicago", "Delhi", "Lagos", "Lima", "Osaka", "Paris", "Seoul", "Zürich"]
DEMO_QUERY = "(and leaf-(BETWEEN event_id 420000 420999) (not leaf-(IS_NULL city)))"


def cache_dir() -> Path:
    root = os.environ.get("HIVE_BRIDGE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "hive-bridge")
    return Path(root)


def sample_rows(n_files: int = FILES, rows_per_file: int = ROWS_PER_FILE) -> pa.Table:
    """Events with clustered keys: file k holds event ids [k*rows, (k+1)*rows)."""
    import numpy as np

    n = n_files * rows_per_file
    rng = np.random.default_rng(42)
    event_id = np.arange(n, dtype=np.int64)
    day_index = event_id * DAYS // n
    base = dt.datetime(2024, 3, 1)
    ts = np.array([base + dt.timedelta(days=int(d)) for d in range(DAYS)], dtype="datetime64[us]")[day_index]
    ts = ts + (event_id % (24 * 3600)).astype("timedelta64[s]")
    city = np.array(CITIES, dtype=object)[rng.integers(0, len(CITIES), n)]
    city_mask = rng.random(n) < 0.01
    amount = rng.integers(0, 100_000, n)
    return pa.table({
        "event_id": pa.array(event_id),
        "user_id": pa.array(rng.integers(0, 50_000, n).astype(np.int32)),
        "city": pa.array(city, pa.string(), mask=city_mask),
        "price": pa.array(rng.random(n) * 100.0),
        "amount": pa.array([Decimal(int(a)).scaleb(-2) for a in amount], pa.decimal128(12, 2)),
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "active": pa.array(rng.random(n) < 0.5),
        "day": pa.array([(base + dt.timedelta(days=int(d))).date().isoformat() for d in day_index], pa.string()),
    })


def build_table(path: Path, n_files: int = FILES, rows_per_file: int = ROWS_PER_FILE) -> Path:
    from hive_bridge.table.writer import write_hudi_table

    tmp = path.with_name(path.name + ".building")
    if tmp.exists():
        import shutil

        shutil.rmtree(tmp)
    data = sample_rows(n_files, rows_per_file)
    # one insert commit per day partition keeps files narrow in event_id (clustered keys)
    write_hudi_table(tmp, data, partition_fields=("day",), hive_style=True, record_key_fields=("event_id",),
                     rows_per_file=rows_per_file, table_name="demo_events")
    tmp.rename(path)
    return path


def demo_table(rebuild: bool = False, err: Console | None = None) -> Path:
    path = cache_dir() / f"demo_events_{DEMO_VERSION}"
    if rebuild and path.exists():
        import shutil

        shutil.rmtree(path)
    if not (path / ".hoodie" / "hoodie.properties").is_file():
        if err:
            err.print(f"building the sample table ({FILES} files × {ROWS_PER_FILE} rows) in {path} …",
                      highlight=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        build_table(path)
    return path


def sample_log() -> str:
    return resources.files("hive_bridge").joinpath("data", "sample.log").read_text(encoding="utf-8")


def run_demo(out: Console, err: Console, rebuild: bool = False, verbose: bool = False) -> int:
    import io

    from hive_bridge import cli, spark_start
    from hive_bridge.spark import list_files as list_kept
    from hive_bridge.spark import read_slices

    path = demo_table(rebuild, err)
    from hive_bridge.table import HudiTable
    from hive_bridge.table.stats import ColumnStatsIndex

    with err.status("building the column-statistics index…"):
        ColumnStatsIndex(HudiTable.open(path)).load()
    out.rule("1. Filters found in a sample Spark/Hive log, replayed against the sample table")
    log_path = cache_dir() / "demo_sample.log"
    log_path.write_text(sample_log(), encoding="utf-8")
    out.print(f"table: {path}\nlog:   {log_path}\n", highlight=False)
    code = cli.main(["replay", "--table", str(path), str(log_path)], stdout=out.file,  # type: ignore[arg-type]
                    stderr=io.StringIO())

    out.rule("2. One query through Spark: pruned (hive-bridge) and unpruned (Spark's own parquet scan)")
    out.print(f"filter: {DEMO_QUERY}", highlight=False)
    with err.status("starting Spark (local mode)…"):
        spark = spark_start.start_session("hive-bridge-demo", verbose=verbose)
    table, listing, residual = list_kept(str(path), DEMO_QUERY)
    _, full_listing, _ = list_kept(str(path), DEMO_QUERY, prune=False)
    assert residual is not None

    def timed(slices: list[Any]) -> tuple[float, list[Any]]:
        t0 = time.perf_counter()
        rows = read_slices(spark, table, slices).where(residual).collect()
        return time.perf_counter() - t0, rows

    timed(listing.slices)  # warm-up (JIT, classes)
    pruned_s, pruned_rows = timed(listing.slices)
    full_s, full_rows = timed(full_listing.slices)
    same = sorted(map(tuple, pruned_rows), key=repr) == sorted(map(tuple, full_rows), key=repr)
    out.print(f"pruned:   {listing.files_kept:5d} of {listing.files_total} files read, {len(pruned_rows)} rows, "
              f"{pruned_s:.2f} s", highlight=False)
    out.print(f"unpruned: {full_listing.files_kept:5d} of {full_listing.files_total} files read, "
              f"{len(full_rows)} rows, {full_s:.2f} s", highlight=False)
    out.print(f"rows identical: {'yes' if same else 'NO'}; speed-up {full_s / pruned_s:.1f}×", highlight=False)
    spark.stop()
    return 0 if same and code == 0 else 1
