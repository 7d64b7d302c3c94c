"""``hive-bridge demo``: an embedded sample Hudi table, a sample log in real Spark/Hive formats, the pruning
report, and one query through Spark pruned and unpruned.

The table is built once into a cache folder (``$HIVE_BRIDGE_CACHE`` or ``~/.cache/hive-bridge``): 1,000 base
files of 1,000 events each, hive-style partitioned by ``day``, with ``event_id`` clustered (each file holds a
narrow range), as an ingestion job writes them.
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console

from hive_bridge import config
from hive_bridge.testing.sample_table import FILES, ROWS_PER_FILE, build_table

DEMO_VERSION = "v1"
DEMO_QUERY = "(and leaf-(BETWEEN event_id 420000 420999) (not leaf-(IS_NULL city)))"


def cache_dir() -> Path:
    return config.settings().cache_root


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

    from hive_bridge.app.replay import replay
    from hive_bridge.spark import list_files as list_kept
    from hive_bridge.spark import read_slices
    from hive_bridge.spark import start as spark_start

    path = demo_table(rebuild, err)
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable

    with err.status("building the column-statistics index…"):
        ColumnStatsIndex(HudiTable.open(path)).load()
    out.rule("1. Filters found in a sample Spark/Hive log, replayed against the sample table")
    log_path = cache_dir() / "demo_sample.log"
    log_path.write_text(sample_log(), encoding="utf-8")
    out.print(f"table: {path}\nlog:   {log_path}\n", highlight=False)
    code = replay(HudiTable.open(path), sample_log().splitlines(keepends=True), out=out,
                  err=Console(file=io.StringIO()))

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
