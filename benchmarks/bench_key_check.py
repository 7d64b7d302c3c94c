"""Benchmark: the cost of checking Hudi's record index and a secondary index against a merge-on-read table's
merged rows (``hive_bridge.pruning.key_check``), on a table with many slices with log files.

The table (test writer, table version 8, complex keys ``txn_id,account_id``, partitioned by ``region``): an INSERT
of ``--groups`` file groups x ``--rows`` rows (so the indexes are used only where the files confirm them), then
``--rounds`` upserts each updating ``--updated`` of the rows (a tenth by default) of every file group, moving
their ``merchant`` (one log file per group and round), and one delete of a row per group (a delete block); the
metadata table's record index and ``merchant`` secondary index written over the merged rows. The check runs
twice on a cold cache of checks: over the base files only (the table as it was before its log files, a copy) and
over the merge-on-read slices. Figures: time (best of ``--repeat``), of it the reading and merging of the slices and
the record index lookup of their keys (timed apart once), rows checked, log blocks merged, bytes read
(the column chunks of ``_hoodie_record_key`` and ``merchant`` in the base files, from their footers, plus the
whole log files), and the storage's request count.

Run: ``.venv/bin/python benchmarks/bench_key_check.py [--groups 200 --rows 2000 --rounds 3] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive_bridge.layout.log_blocks import block_filter
from hive_bridge.pruning import key_check
from hive_bridge.pruning.slice_keys import merge_rule, slice_keys
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import write_metadata_table
from hive_bridge.testing.writer import HudiWriter

INDEX = "secondary_index_merchant_idx"


def _rows(ids: range | list[int], round_: int = 0) -> pa.Table:
    ids = list(ids)
    return pa.table({
        "txn_id": [f"TXN-{i:08d}" for i in ids],
        "account_id": [f"ACC-{i % 97}" for i in ids],
        "merchant": [f"M{(i + round_ * 7) % 50}" for i in ids],
        "amount": pa.array([i * 0.5 for i in ids], pa.float64()),
        "region": [("us", "eu", "apac")[i % 3] for i in ids],
    })


def build(root: Path, groups: int, rows: int, rounds: int, updated: float) -> Path:
    """The table with log files at ``root``; its state before the log files (base files only) at
    ``root``-base."""
    w = HudiWriter(root, version=8, table_type="MERGE_ON_READ", partition_fields=["region"],
                   record_key_fields=["txn_id", "account_id"], rows_per_file=rows)
    # one region per insert, so every file group holds rows rows
    total = groups * rows
    for region in range(3):
        w.insert(_rows([i for i in range(total) if i % 3 == region]))
    base = root.with_name(root.name + "-base")
    shutil.copytree(root, base)
    write_metadata_table(base, secondary_indexes={"merchant_idx": "merchant"})
    step = max(1, int(1 / updated))
    for r in range(1, rounds + 1):
        w.upsert(_rows(range(r, total, step), r))
    w.delete(_rows(range(0, total, rows)).select(["txn_id", "account_id", "region"]))
    write_metadata_table(root, secondary_indexes={"merchant_idx": "merchant"}, key_index_logs="merged")
    return base


def _column_bytes(table: HudiTable, columns: list[str]) -> int:
    out = 0
    for s in table.latest_file_slices():
        if s.base_file is None:
            continue
        md = pq.read_metadata(s.base_file.full_path)
        names = md.schema.names
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            out += sum(rg.column(names.index(c)).total_compressed_size for c in columns if c in names)
    return out


def measure(root: Path, repeat: int) -> dict[str, Any]:
    best = float("inf")
    check: Any = None
    requests: dict[str, int] = {}
    for _ in range(repeat):
        table = HudiTable.open(root)
        slices = table.latest_file_slices()
        mdt = table.metadata_table()
        key_check._CACHE.clear()
        before = dict(table.storage.requests.counts())
        t0 = time.perf_counter()
        check = key_check.check_key_indexes(table, slices, mdt, {"merchant": INDEX})
        best = min(best, time.perf_counter() - t0)
        after = table.storage.requests.counts()
        requests = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    base_bytes = _column_bytes(table, ["_hoodie_record_key", "merchant"])
    # the check's parts: reading and merging the slices, then the metadata table's lookups of their keys
    rule = merge_rule(table.properties)
    assert not isinstance(rule, str), rule
    ok = block_filter(table.timeline)
    t0 = time.perf_counter()
    keys = [k for s in slices
            for k in slice_keys(table, s, ["merchant"], rule, ok, lambda sl, cols: key_check._read(table, sl, cols)).keys]
    t1 = time.perf_counter()
    table.metadata_table().record_index(keys)
    t2 = time.perf_counter()
    return {"read_merge_seconds": round(t1 - t0, 3), "record_index_lookup_seconds": round(t2 - t1, 3),
            "slices": len(slices), "with_logs": sum(1 for s in slices if s.log_files),
            "log_files": sum(len(s.log_files) for s in slices), "seconds": round(best, 3),
            "rows_checked": check.rows, "log_blocks": check.log_blocks, "log_bytes": check.log_bytes,
            "base_column_bytes": base_bytes, "requests": requests.get("total", 0),
            "record_index": check.record_index, "secondary": sorted(check.secondary), "problems": check.problems}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--updated", type=float, default=0.1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="build the table here and keep it")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-key-check-"))
    root = work / "mor"
    try:
        t0 = time.perf_counter()
        base = build(root, args.groups, args.rows, args.rounds, args.updated) if not root.exists() \
            else root.with_name("mor-base")
        print(f"built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        out = {"base files only": measure(base, args.repeat), "merge-on-read": measure(root, args.repeat)}
        print(json.dumps(out, indent=1))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
