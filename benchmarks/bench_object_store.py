"""Benchmark: planning a query on a table on object storage — requests made and time taken, folder listing vs the
metadata table vs the persisted (cached) index.

A copy-on-write table of 10,000 base files (100 partitions, written by HudiWriter, with a metadata table of files
+ column_stats written by the test MDT writer) is uploaded to a local S3-compatible server (moto's server mode on
127.0.0.1, `tests/hive_bridge/s3_server.py`), then one selective key-range filter is planned (open, latest slices,
statistics, pruning) along four paths, each in a fresh HudiTable/ColumnStatsIndex (what a new process does):

1. folders + footers: list every partition folder, read every footer (one ranged GET each: the listing's size
   spares the HEAD), and persist the index into the bucket;
2. folders + cached index: list the folders, read the persisted index (one listing, one GET per segment);
3. MDT: the metadata table's files partition for the listing, its column_stats for statistics (no own index);
4. MDT + cached index.

Each path runs with no injected latency and with ``--latency`` seconds added to every request by the server
(what a remote object store's round trip costs); requests are counted by hive-bridge's Storage counter and by
the server, and must agree. The same slices are kept on every path.

Run: `.venv/bin/python benchmarks/bench_object_store.py [--files 10000] [--latency 0.01] [--keep DIR]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mdt import SCHEMA, build

import sarg
from hive_bridge.pruning.pruner import Pruner, filter_columns
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import write_metadata_table
from tests.hive_bridge.s3_server import S3Server

BUCKET = "bench-tables"


def upload(s3: S3Server, root: Path, prefix: str, threads: int = 8) -> int:
    from concurrent.futures import ThreadPoolExecutor

    client = s3.client()
    client.create_bucket(Bucket=BUCKET)
    files = [p for p in root.rglob("*") if p.is_file()]

    def put(p: Path) -> None:
        client.upload_file(str(p), BUCKET, f"{prefix}/{p.relative_to(root).as_posix()}")

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(put, files))
    return len(files)


def plan(uri: str, options: dict[str, str], filt: sarg.SearchArgument, listing: str,
         make_index: Callable[[HudiTable], ColumnStatsIndex]) -> dict[str, Any]:
    t0 = time.perf_counter()
    table = HudiTable.open(uri, listing=listing, storage_options=options)
    slices = table.latest_file_slices()
    index = make_index(table)
    result = Pruner(table, index, slices).run(filt)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "requests": table.storage.requests.counts(), "listing": table.listing_source,
            "kept": sorted((s.partition_path, s.file_id) for s in result.slices), "files": len(slices),
            "counters": index.last}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=10)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--latency", type=float, default=0.01, help="seconds added to every request (second run)")
    ap.add_argument("--keep", type=Path, default=None, help="folder to keep the local table in (reused)")
    args = ap.parse_args()
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_object_store_"))
    os.environ["HIVE_BRIDGE_CACHE"] = str(work / "cache")
    root = work / f"events_{args.files}x{args.rows}"
    print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    try:
        if not (root / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file():
            shutil.rmtree(root, ignore_errors=True)
            t0 = time.perf_counter()
            build(root, args.files, args.rows, args.partitions)
            write_metadata_table(root)
            print(f"[build] {args.files:,} files + metadata table in {time.perf_counter() - t0:.1f} s")
        lo = (args.files // 2) * args.rows + 3
        filt = sarg.parse(f"leaf-(BETWEEN id {lo} {lo + 2 * args.rows})", SCHEMA)
        with S3Server() as s3:
            t0 = time.perf_counter()
            n = upload(s3, root, "events")
            print(f"[upload] {n:,} objects to the local S3 server in {time.perf_counter() - t0:.1f} s; filter {filt}")
            uri = f"s3://{BUCKET}/events"
            options = {"endpoint_override": s3.endpoint, "access_key": "test", "secret_key": "test",
                       "region": "us-east-1", "request_timeout": "120"}
            paths: list[tuple[str, str, Callable[[HudiTable], ColumnStatsIndex]]] = [
                ("MDT (files + column_stats)", "mdt",
                 lambda t: ColumnStatsIndex(t, persist=False, source="mdt", mdt_columns=filter_columns(t, filt))),
                ("folders + footers (index built, persisted in the bucket)", "folders",
                 lambda t: ColumnStatsIndex(t, source="footers")),
                ("folders + cached index", "folders", lambda t: ColumnStatsIndex(t, source="footers")),
                ("MDT listing + cached index", "mdt", lambda t: ColumnStatsIndex(t, source="footers")),
            ]
            kept = None
            for latency in (0.0, args.latency):
                s3.set_latency(latency)
                if latency:  # the index built in the first round is dropped: every path starts as it did
                    ColumnStatsIndex(HudiTable.open(uri, storage_options=options)).clear()
                for label, listing, make in paths:
                    s3.reset()
                    r = plan(uri, options, filt, listing, make)
                    server = {k: v for k, v in s3.requests().items() if v}
                    mine = {k: v for k, v in r["requests"].items() if v and k != "total"}
                    assert server == mine, (label, server, mine)
                    assert kept is None or r["kept"] == kept, label
                    kept = r["kept"]
                    c = r["counters"]
                    print(f"[latency {latency * 1000:.0f} ms] {label}: {r['seconds']:.2f} s, "
                          f"{r['requests']['total']:,} requests ({', '.join(f'{k} {v:,}' for k, v in mine.items())});"
                          f" listing {r['listing']}, {r['files']:,} files, index {c.files_from_index:,} / footers "
                          f"{c.files_from_footers:,} / mdt {c.files_from_mdt:,}; {len(r['kept'])} kept")
            s3.set_latency(0)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
