"""Benchmark: ``hive-bridge replay`` over a History Server folder of Spark event logs.

Builds ``--tables`` Hudi tables (copy-on-write, partitioned, ``--files`` base files each, HudiWriter) and a folder
of ``--apps`` applications' event logs holding ``--executions`` SQL executions in all, about ``--size-mb`` MB
uncompressed: each execution is Spark's real event sequence for one scan (SQLExecutionStart with the plan's
FileSourceScanExec metadata, an AQE re-plan every fourth execution, DriverAccumUpdates with the files and bytes
read, SQLExecutionEnd) padded with task events (most of an event log's bytes are TaskEnd events) up to the
size. Filters vary over ``--distinct`` values per table. ``--codec zstd`` writes each application rolled and
zstd-compressed, as Spark 4 does by default.

Then ``hive-bridge replay --json FOLDER`` runs in a child process; reported: wall time, peak RSS of the child
(``ru_maxrss``), scans, tables, distinct filters. The budget: 1 GB / 10,000 executions / 20 tables in at most
2 minutes and 500 MB on 2 cores.

Run: ``.venv/bin/python benchmarks/bench_replay.py [--executions 10000 --tables 20 --size-mb 1000]
[--codec none|zstd] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

SQL = "org.apache.spark.sql.execution.ui."


def write_tables(root: Path, n: int, files: int) -> list[Path]:
    from hive_bridge.testing.writer import HudiWriter

    paths = []
    rows = files * 10
    for t in range(n):
        path = root / f"table_{t:02d}"
        if not (path / ".hoodie").is_dir():
            data = pa.table({"id": pa.array(range(rows), pa.int64()),
                             "name": pa.array([f"n{i}" for i in range(rows)]),
                             "price": pa.array([i * 0.5 for i in range(rows)]),
                             "dt": pa.array([f"2024-01-{1 + i * 4 // rows:02d}" for i in range(rows)])})
            HudiWriter(path, partition_fields=("dt",), rows_per_file=10).insert(data)
        paths.append(path)
    return paths


_WORDS = ("executor", "shuffle", "bytes", "records", "read", "write", "time", "blocks", "remote", "local",
          "memory", "disk", "spilled", "peak", "jvm", "gc", "result", "size", "input", "output")


def _filler(rng: random.Random, size: int = 16 << 20) -> str:
    """Text that compresses about as well as a real event log's task metrics (not a run of one byte)."""
    words = rng.choices(_WORDS, k=size // 6)
    numbers = [str(rng.randrange(1 << 20)) for _ in range(len(words) // 4 + 1)]
    return " ".join(w if i % 4 else numbers[i // 4] for i, w in enumerate(words))[:size]


def _slice(filler: str, start: int, n: int) -> str:
    return filler[start:start + n] if filler else "x" * n


def _task_end(i: int, pad: int, filler: str = "") -> str:
    ev = {"Event": "SparkListenerTaskEnd", "Stage ID": i, "Stage Attempt ID": 0, "Task Type": "ResultTask",
          "Task End Reason": {"Reason": "Success"},
          "Task Info": {"Task ID": i, "Index": 0, "Attempt": 0, "Launch Time": 1700000000000 + i,
                        "Executor ID": "driver", "Host": "localhost", "Locality": "PROCESS_LOCAL",
                        "Accumulables": [{"ID": 1000 + k, "Name": f"internal.metrics.m{k}", "Update": k,
                                          "Value": k, "Internal": True, "Count Failed Values": True}
                                         for k in range(8)]},
          "Padding": _slice(filler, (i * 7919) % max(1, len(filler) - pad), max(0, pad))}
    return json.dumps(ev, separators=(",", ":"))


def _execution(exec_id: int, table: Path, value: int, acc: int, aqe: bool) -> list[str]:
    part = f"dt=2024-01-0{1 + value % 4}"
    meta = {"Location": f"InMemoryFileIndex(1 paths)[file:{table}/{part}/f-{value}.parquet, ...]",
            "ReadSchema": "struct<id:bigint,name:string,price:double>", "Format": "Parquet", "Batched": "true",
            "PartitionFilters": f"[isnotnull(dt#{exec_id}4), (dt#{exec_id}4 = 2024-01-0{1 + value % 4})]",
            "PushedFilters": f"[IsNotNull(id), GreaterThan(id,{value}), EqualTo(name,n{value})]",
            "DataFilters": f"[isnotnull(id#{exec_id}1L), (id#{exec_id}1L > {value}), (name#{exec_id}2 = n{value})]"}
    metrics = [{"name": "number of files read", "accumulatorId": acc, "metricType": "sum"},
               {"name": "size of files read", "accumulatorId": acc + 1, "metricType": "size"}]
    scan = {"nodeName": f"Scan parquet {table.name}", "simpleString": "FileScan parquet ...", "children": [],
            "metadata": meta, "metrics": metrics}
    plan = {"nodeName": "WholeStageCodegen (1)", "simpleString": "WholeStageCodegen (1)", "metadata": {},
            "metrics": [], "children": [{"nodeName": "ColumnarToRow", "simpleString": "ColumnarToRow",
                                          "metadata": {}, "metrics": [], "children": [scan]}]}
    start = {"Event": SQL + "SparkListenerSQLExecutionStart", "executionId": exec_id,
             "description": f"collect at job.py:{exec_id}", "details": "", "physicalPlanDescription": "...",
             "sparkPlanInfo": plan, "time": 1700000000000 + exec_id, "modifiedConfigs": {}}
    out = [json.dumps(start, separators=(",", ":"))]
    if aqe:
        out.append(json.dumps({"Event": SQL + "SparkListenerSQLAdaptiveExecutionUpdate", "executionId": exec_id,
                               "physicalPlanDescription": "...", "sparkPlanInfo": plan}, separators=(",", ":")))
    out.append(json.dumps({"Event": SQL + "SparkListenerDriverAccumUpdates", "executionId": exec_id,
                           "accumUpdates": [[acc, 1 + value % 3], [acc + 1, 4000 * (1 + value % 3)]]}))
    out.append(json.dumps({"Event": SQL + "SparkListenerSQLExecutionEnd", "executionId": exec_id,
                           "time": 1700000000001 + exec_id}))
    return out


def write_logs(root: Path, tables: list[Path], executions: int, apps: int, size_mb: int, distinct: int,
               codec: str) -> int:
    rng = random.Random(7)
    filler = _filler(rng)
    per_exec = size_mb * 1_000_000 // executions
    head = ['{"Event":"SparkListenerLogStart","Spark Version":"3.5.8"}',
            json.dumps({"Event": "SparkListenerEnvironmentUpdate", "JVM Information": {},
                        "Spark Properties": {"spark.sql.session.timeZone": "UTC"}, "System Properties": {},
                        "Classpath Entries": {}})]
    total = 0
    exec_id = 0
    for a in range(apps):
        app = f"local-{1700000000000 + a}"
        if codec == "zstd":
            folder = root / f"eventlog_v2_{app}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"appstatus_{app}").write_bytes(b"")
            target = folder / f"events_1_{app}.zstd"
        else:
            root.mkdir(parents=True, exist_ok=True)
            target = root / app
        raw = open(target, "wb")
        sink = raw
        if codec == "zstd":
            import zstandard

            sink = zstandard.ZstdCompressor(level=3).stream_writer(raw)  # type: ignore[assignment]
        with raw:
            sink.write(("\n".join(head) + "\n").encode())
            for _ in range(executions // apps):
                table = tables[exec_id % len(tables)]
                lines = _execution(exec_id, table, rng.randrange(distinct), 10_000 + 10 * exec_id, exec_id % 4 == 0)
                used = sum(len(x) + 1 for x in lines)
                tasks = max(1, (per_exec - used) // 2600)
                pad = (per_exec - used) // tasks - 700
                lines[1:1] = [_task_end(exec_id * 100 + k, pad, filler) for k in range(tasks)]
                data = ("\n".join(lines) + "\n").encode()
                total += len(data)
                sink.write(data)
                exec_id += 1
            if sink is not raw:
                sink.flush()
                sink.close()  # type: ignore[attr-defined]
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--executions", type=int, default=10_000)
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--apps", type=int, default=10)
    ap.add_argument("--size-mb", type=int, default=1000)
    ap.add_argument("--files", type=int, default=40, help="base files per table")
    ap.add_argument("--distinct", type=int, default=50, help="distinct filter values per table")
    ap.add_argument("--codec", choices=("none", "zstd"), default="none")
    ap.add_argument("--keep", default=None, help="build in (and reuse the tables of) this folder")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-replay-"))
    try:
        t0 = time.perf_counter()
        tables = write_tables(work / "lake", args.tables, args.files)
        logs = work / f"logs-{args.codec}"
        shutil.rmtree(logs, ignore_errors=True)
        size = write_logs(logs, tables, args.executions, args.apps, args.size_mb, args.distinct, args.codec)
        on_disk = sum(p.stat().st_size for p in logs.rglob("*") if p.is_file())
        print(f"built {args.tables} tables and {args.executions} executions in {args.apps} applications: "
              f"{size / 1e6:.0f} MB uncompressed, {on_disk / 1e6:.0f} MB on disk ({args.codec}), "
              f"{time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "hive_bridge", "replay", "--json", "--listing", "folders",
                               str(logs)], capture_output=True, text=True, env=dict(os.environ))
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if proc.returncode not in (0, 1):
            print(proc.stderr[-2000:])
            raise SystemExit(proc.returncode)
        summary = json.loads(proc.stdout.splitlines()[-1])
        print(f"replay: {wall:.1f} s, peak RSS {peak:.0f} MB; {summary['scans']} scans, {len(summary['tables'])} "
              f"tables, {summary['filters']} distinct filters, {summary['problems']} problems, exit "
              f"{proc.returncode}")
        print(f"budget: <= 120 s and <= 500 MB: {'met' if wall <= 120 and peak <= 500 else 'NOT met'}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
