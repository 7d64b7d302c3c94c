"""Workloads made up for the HTML report's tests and benchmark: many tables of many partitions and files, many
distinct filters (HiveQL text naming some columns, occurrences, queries, Spark's figures, the slices each keeps)
put straight into a :class:`~hive_bridge.workload.runner.Workload`, over slices of file groups that need not exist
(the snapshot given is a real table's, its slices replaced); and a sample of the layout advisor's output."""

from __future__ import annotations

import dataclasses
import random

from hive_bridge.advisor.advise import Advice, Candidate
from hive_bridge.layout.fsview import BaseFile, FileSlice
from hive_bridge.pruning import ListStatusResult
from hive_bridge.pruning.pruner import FileStatus
from hive_bridge.pruning.snapshot import TableSnapshot
from hive_bridge.workload.runner import FilterEntry, TableState, Workload
from hive_bridge.workload.tables import TableResolver

COLUMNS = ["id", "name", "price", "amount", "d", "ts", "city", "user_id"]


def synthetic_slices(n_partitions: int, files_per_partition: int) -> list[FileSlice]:
    out = []
    for p in range(n_partitions):
        part = f"region=r{p:03d}/day=2024-01-{1 + p % 28:02d}" if n_partitions > 1 else ""
        for f in range(files_per_partition):
            fid = f"{p:04d}{f:04d}-7c1e-4f4a-9a0b-{f:012d}"
            name = f"{fid}_0-1-0_20240101000000000.parquet"
            path = f"{part}/{name}" if part else name
            base = BaseFile(path, f"/lake/t/{path}", 64_000_000 + 1000 * f, 1.7e9, "20240101000000000")
            out.append(FileSlice(fid, part, "20240101000000000", base, (), {}))
    return out


def synthetic_workload(snap: TableSnapshot, tables: int, filters: int, seed: int = 0) -> Workload:
    """``tables`` tables of 30 partitions × 40 files, ``filters`` distinct filters spread over them, each with a
    HiveQL text naming some columns, occurrences, queries, Spark's figures and its kept slices."""
    rng = random.Random(seed)
    work = Workload(TableResolver())
    per_table = filters // tables
    for t in range(tables):
        uri = f"s3://bucket/warehouse/db_{t % 7}/table_{t:02d}"
        slices = synthetic_slices(30 if t % 5 else 1, 40 if t % 5 else 900)
        state = work.tables[uri] = TableState(uri, dataclasses.replace(snap, slices=slices))
        total_bytes = sum(s.base_file.size for s in slices if s.base_file is not None)
        for k in range(per_table):
            cols = rng.sample(COLUMNS, rng.randint(1, 3))
            values = ", ".join(str(rng.randint(0, 10**6)) for _ in range(rng.randint(1, 40)))
            hiveql = " AND ".join(f"{c} IN ({values})" if i == 0 else f"{c} >= {rng.randint(0, 999)}"
                                  for i, c in enumerate(cols)) + f" AND k{k} IS NOT NULL"
            start = rng.randrange(len(slices))
            kept = slices[start:start + rng.choice([1, 5, 40, 200])]
            occ = rng.randint(1, 30)
            entry = FilterEntry(uri, hiveql, "UTC", "spark-eventlog", unknown=rng.choice([0, 0, 1]),
                                occurrences=occ, queries=[f"app-{t}#{q}" for q in range(min(occ, 50))],
                                sources={"spark-eventlog"}, spark_scans=occ, spark_files=occ * len(kept),
                                spark_bytes=occ * 64_000_000 * len(kept), columns=(*cols, f"k{k}"))
            entry.listing = ListStatusResult(
                [FileStatus(s.base_file.full_path, s.base_file.size, 0) for s in kept if s.base_file], kept,
                files_total=len(slices), bytes_total=total_bytes)
            state.entries[(hiveql, "UTC", "snapshot")] = entry
            state.scans += occ
    work.unresolved["file:/lake/other"] = 3
    return work


#: a sample of the layout advisor's advice: one table with candidates and a recommendation, one without
SAMPLE_ADVICE: list[Advice] = [Advice(
    table="s3://bucket/warehouse/db/events", sample_rows=200_000, samples=3,
    target_file_bytes=128 * 1024 * 1024, filters=42,
    candidates=[
        Candidate("today", files_read=120.0, bytes_read=7.5e9, bytes_low=7.5e9, bytes_high=7.5e9, saving=0.0),
        Candidate("linear(city)", files_read=60.5, bytes_read=3.9e9, bytes_low=3.1e9, bytes_high=4.4e9,
                  saving=0.48),
        Candidate("z-order(city,event_id)", files_read=21.0, bytes_read=1.4e9, bytes_low=1.0e9, bytes_high=2.2e9,
                  saving=0.81),
        Candidate("hilbert(city,event_id,ts)", files_read=25.0, bytes_read=1.6e9, bytes_low=1.1e9,
                  bytes_high=2.0e9, saving=0.79),
        Candidate("partition(region)", files_read=130.0, bytes_read=8.1e9, bytes_low=7.9e9, bytes_high=8.6e9,
                  saving=-0.08),
    ],
    recommended={"layout": "z-order(city,event_id)", "saving": 0.81, "settings": {
        "hoodie.clustering.plan.strategy.sort.columns": "city,event_id",
        "hoodie.layout.optimize.strategy": "z-order", "hoodie.clustering.inline": "true"}},
    notes=["<b>city</b> is filtered by 80% of the scans"],
), Advice(
    table="s3://bucket/warehouse/db/dim", sample_rows=1000, samples=1, target_file_bytes=1 << 27,
    filters=2, candidates=[], recommended=None, notes=["too few filters to advise on"],
)]
