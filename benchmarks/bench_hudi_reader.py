"""Side by side with Hudi's own Spark data source: per query, files read, bytes read, planning time and query time
for (a) ``spark.read.format("hudi")`` with data skipping on (``hoodie.metadata.enable``,
``hoodie.enable.data.skipping``, the metadata table's column stats), (b) the same reader with it off,
(c) ``hudi-hive``, (d) Spark's plain parquet reader over the latest base files; and the losses: any reader that
returns other rows than the truth (Spark's parquet reader over the latest files with pushdown off; for
merge-on-read tables the slices merged by hudi-rs).

Tables: ``bench_spark_sql``'s workload (its data and queries: `--files` files of `--rows` rows, keys clustered,
copy-on-write and merge-on-read with every file group updated in a log file), written here by Hudi's own Spark
writer so that the metadata table has the column stats Hudi's reader skips with; and shared real tables
(`--real`, zip stems under /work/shared/data/hudi-tables/) with their filters.

``--workload peers``: bench_peers' table instead (its Layout: ``--files`` 10,000 files of ``--rows`` 100 rows,
event_id clustered, city with NULLs, amount with -0.0 and NaN; written by Hudi's writer in one ``bulk_insert`` of
parquet files written here, range-partitioned into one base file a Spark task; about 10 minutes on 2 idle cores)
and nine of its filters as Spark SQL (:data:`PEERS`). The readers that read every file (Hudi's without data
skipping, plain parquet) take minutes a query there: ``--full-scans N`` measures them on the first N queries of a
table only (default 1 with peers; the others are shown as reading every file, not timed). ``--workload tpch``:
TPC-H's 22 queries through Hudi's reader against hudi-hive (``bench_hudi_tpch.py``).

Hudi's reader runs in its own environment (``tools/hudi_peer.py``: pyspark 3.5 with Hudi 1.1's Spark 3.5 bundle; Hudi
publishes no Spark 4 bundle), hive-bridge in its own (pyspark 4.3); Spark local[2] both. **Interleaved** (the
default): both sessions stay alive for the whole run, Hudi's as a long-lived driver (``hudi_peer.Session``:
``hudi_peer_driver.py --serve`` reads one read job a line on stdin and answers on stdout, keeping its DataFrames),
and each query is measured by each reader in turn (Hudi's skipping on and off, then hudi-hive and plain parquet;
which side goes first alternates from query to query), so a change of load on the shared machine hits both alike
within seconds. A long-lived driver rather than rounds of fresh driver runs: each round would pay Hudi's JVM
start, its bundle's class loading and its DataFrames' first listing again (tens of seconds, more than a query),
and time a cold Hudi against a warm hive-bridge. ``--sequential``: the former mode, Hudi's JVM first for every
query, then hive-bridge's session. Per query and reader the median of `--repeat` runs after one warm-up run; one
DataFrame per table and reader reused. Files and bytes: for Hudi, its scan's "number of files read" and "size of
files read" (file slices; a merge-on-read slice counts its base file's bytes); for hudi-hive, the files its scan
read and the planner's kept bytes (base and log files); for plain parquet, every latest base file. Planning:
Hudi's physical plan with its file index's listing (data skipping); hive-bridge's planner as a scan calls it (the
table's snapshot warm). Query: the rest (Hudi, parquet) or the whole ``count(*)`` of the ``to_json`` rows
(hudi-hive: its planning included).

    python benchmarks/bench_hudi_reader.py [--workload spark_sql|peers|tpch] [--files 30] [--rows 200] [--repeat 2]
        [--real NAME ...] [--full-scans N] [--sequential] [--json OUT] [--scale 0.1] [--queries 1,6]
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import hudi_peer
from peak_memory import jvm_peak_mib, python_peak_mib

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data" / "hudi-tables"
TXN = ["amount > 100", "txn_id IN ('TXN-001', 'TXN-002', 'TXN-003')", "currency = 'EUR' OR amount < 20",
       "region = 'APAC'", "txn_id = 'no-such-id'", "amount > 1e9"]
TRIPS = ["fare > 30", "fare > 90", "city = 'san_francisco'", "rider = 'rider-A' OR fare < 10", "fare > 1e9",
         "driver LIKE 'driver-K%'"]
REAL = {"sample_table.cow.v9_txns_simple_meta": TXN, "quickstart_trips_table.mor.avro.v8_trips_8i3u1d": TRIPS}


def workload(root: Path, files: int, rows: int, mor: bool) -> dict[str, Any]:
    """bench_spark_sql's table (its build(): event_id, city, amount, ts) as a spec for Hudi's writer."""
    n = files * rows
    cities = ["Lima", "Osaka", "Paris", "Seoul"]
    data = [[i, cities[i % 4], i * 0.5, 0] for i in range(n)]
    commits: list[dict[str, Any]] = [{"op": "bulk_insert", "rows": data, "files": files}]
    if mor:   # every file group gets a log file: two rows each, amount moved far below the base file's range
        keys = [g * rows + r for g in range(files) for r in (1, rows // 2)]
        commits.append({"op": "upsert", "rows": [[k, "Lima", -float(k), 1] for k in keys]})
    return {"path": str(root), "name": root.name, "type": "MERGE_ON_READ" if mor else "COPY_ON_WRITE",
            "key": "event_id", "ordering": "ts", "partition": None,
            "schema": "event_id bigint, city string, amount double, ts bigint", "commits": commits,
            "metadata": {"column_stats": True, "partition_stats": False, "record_index": False},
            "options": {"hoodie.parquet.max.file.size": str(1 << 30)}}


#: bench_peers' filters run here (its labels): the selective ones, the NULL, -0.0 and NaN hazards
PEERS = ("key =", "key range", "key IN, NOT NULL", "NOT key <=", "string IN", "IS NULL, key <", "= -0.0",
         "NOT <= (NaN)", "= NaN")


def peers_workload(root: Path, files: int, rows: int) -> tuple[dict[str, Any], list[str]]:
    """bench_peers' table (its Layout: event_id clustered, city with NULLs, amount with -0.0 and NaN) as a spec for
    Hudi's writer: one ``bulk_insert`` of parquet files written here, range-partitioned by event_id into ``files``
    Spark tasks, one base file each; and its :data:`PEERS` filters as Spark SQL."""
    import pyarrow.parquet as pq
    from bench_peers import Layout
    from bench_peers import filters as peer_filters

    from hive_bridge.filters.residual import to_sql

    layout = Layout(files, rows)
    src = root.parent / f"{root.name}.source"
    src.mkdir(parents=True)
    step = max(1, 200_000 // rows) * rows
    for start in range(0, layout.total, step):
        pq.write_table(layout.chunk(start, min(layout.total, start + step)), src / f"part-{start:09d}.parquet")
    spec = {"path": str(root), "name": root.name, "type": "COPY_ON_WRITE", "key": "event_id", "ordering": "event_id",
            "partition": None, "schema": "event_id bigint, city string, amount double",
            "commits": [{"op": "bulk_insert", "parquet": str(src), "files": files}],
            "metadata": {"column_stats": True, "partition_stats": False, "record_index": False},
            # Hudi's bloom filter in every footer sized to the file's rows (60,000 entries by default: 435 KB a
            # 100-row file, which every reader would read)
            "options": {"hoodie.parquet.max.file.size": str(1 << 30), "hoodie.index.bloom.num_entries": str(rows)}}
    return spec, [to_sql(f.parse()) for f in peer_filters(layout) if f.label in PEERS]


def queries(n: int, rows: int) -> list[str]:
    k = n // 2
    return [f"event_id = {k + 3}", f"event_id BETWEEN {k} AND {k + rows * 20}", f"event_id IN (7, {n // 3}, {n // 2 + 1})",
            f"event_id > {n - n // 60}", f"amount < {-(n - n // 100)}.0", f"city = 'Osaka' AND event_id < {rows * 30}"]


def unzip(name: str, dest: Path) -> Path:
    with zipfile.ZipFile(SHARED / f"{name}.zip") as zf:
        zf.extractall(dest, [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m])
    (root,) = [p.parent.parent for p in dest.glob("*/.hoodie/hoodie.properties")]
    return root


def _json_col(df: Any) -> Any:
    from pyspark.sql import functions as F

    cols = sorted(c for c in df.columns if not c.startswith("_hoodie"))
    return F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols])).alias("j")


def _json(df: Any) -> Any:
    return df.select(_json_col(df))


def _digest(rows: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(rows)).encode()).hexdigest()[:16]


def _median_runs(fn: Any, repeat: int) -> tuple[float, Any]:
    fn()
    times, got = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), got


def _files_read(spark: Any, q: Any) -> int:
    """The files a hudi-hive query's scan read: Spark's "number of files read" of its scan, run once on a fresh
    DataFrame. (Read after several runs of one DataFrame it is 0: each action resets the plan's metrics, and the
    scan sets this one only when it first lists its files.)"""
    from hive_bridge.spark.jar import JVM_PACKAGE

    q.collect()
    return int(getattr(spark._jvm, JVM_PACKAGE).Planner.filesRead(q._jdf.queryExecution().executedPlan()))


def why_kept(listing: Any) -> str:
    """What the planner says kept files on a plan (its ``ListStatusResult``): the filter's parts it could not read,
    the slices with log files it kept (read merged), the files kept for lack of statistics."""
    out = [f"'{u.text}' unknown: {u.reason}" for u in (listing.sarg.unknowns if listing.sarg is not None else ())]
    if listing.kept_log_files:
        out.append(f"{listing.kept_log_files} slices with log files kept")
    if listing.kept_unknown:
        out.append(f"{listing.kept_unknown} files kept for lack of statistics")
    return "; ".join(out)


def truth(df: Any, filters: list[str]) -> dict[str, list[str]]:
    """Each filter's sorted ``to_json`` rows of ``df``, from one scan: every row that any filter matches, with a
    flag per filter (a NULL verdict is no match, as in ``where``)."""
    from pyspark.sql import functions as F

    flags = [F.coalesce(F.expr(f), F.lit(False)).alias(f"m{i}") for i, f in enumerate(filters)]
    rows = df.select(_json_col(df), *flags).where(" OR ".join(f"m{i}" for i in range(len(filters)))).collect()
    return {f: sorted(r[0] for r in rows if r[i + 1]) for i, f in enumerate(filters)}


class Ours:
    """hudi-hive, Spark's plain parquet and the truth on one table: its DataFrames made once, reused per filter."""

    def __init__(self, spark: Any, path: str, mor: bool, filters: list[str]) -> None:
        from hive_bridge.spark import read_hudi
        from hive_bridge.table.table import HudiTable

        latest = [s for s in HudiTable.open(path).latest_file_slices() if s.base_file is not None]
        self.spark, self.path = spark, path
        self.base = [str(Path(path) / s.base_file.path) for s in latest if s.base_file is not None]
        self.base_bytes = sum(s.base_file.size for s in latest if s.base_file is not None)
        spark.conf.set("spark.sql.parquet.filterPushdown", "false")
        truth_df = read_hudi(spark, path, None, prune=False).df if mor else spark.read.parquet(*self.base)
        self.truth = truth(truth_df, filters)
        spark.conf.set("spark.sql.parquet.filterPushdown", "true")
        self.hh = spark.read.format("hudi-hive").load(path)
        self.plain = spark.read.parquet(*self.base)

    def every_file(self) -> dict[str, Any]:
        """A reader that reads every latest base file, not measured on this query (``--full-scans``)."""
        return {"files": len(self.base), "bytes": self.base_bytes, "skipped": True}

    def measure(self, f: str, repeat: int, full: bool = True) -> dict[str, Any]:
        from hive_bridge.spark.reads import list_files

        q = _json(self.hh.where(f))
        t_hh, rows = _median_runs(lambda: [r[0] for r in q.collect()], repeat)
        files_read = _files_read(self.spark, _json(self.hh.where(f)))
        t_plan, (_, listing, _) = _median_runs(lambda: list_files(self.path, f), repeat)
        if not full:
            return {"truth": len(self.truth[f]), "truth_digest": _digest(self.truth[f]),
                    "hudi-hive": self._hh(rows, files_read, listing, t_plan, t_hh), "parquet": self.every_file()}
        p = _json(self.plain.where(f))
        t_pq, prow = _median_runs(lambda: [r[0] for r in p.collect()], repeat)
        return {"truth": len(self.truth[f]), "truth_digest": _digest(self.truth[f]),
                "hudi-hive": self._hh(rows, files_read, listing, t_plan, t_hh),
                "parquet": {"count": len(prow), "digest": _digest(prow), "files": len(self.base),
                            "bytes": self.base_bytes, "plan": 0.0, "query": t_pq}}


    @staticmethod
    def _hh(rows: list[str], files_read: int, listing: Any, t_plan: float, t_hh: float) -> dict[str, Any]:
        return {"count": len(rows), "digest": _digest(rows), "files": files_read, "bytes": listing.bytes_kept,
                "plan": t_plan, "query": t_hh, "files_total": listing.files_total, "why": why_kept(listing)}


def peer_medians(reads: list[dict[str, Any]], warm: bool) -> dict[bool, dict[str, dict[str, Any]]]:
    """Hudi's answer per skipping and filter, its planning and query time the median of its runs (the first run
    left out when ``warm``: a warm-up, as on hive-bridge's side)."""
    out: dict[bool, dict[str, dict[str, Any]]] = {}
    for r in reads:
        for x in r["results"]:
            plans = x.get("planning_runs", [x["planning_seconds"]])
            queries_ = x.get("query_runs", [x["query_seconds"]])
            if warm and len(plans) > 1:
                plans, queries_ = plans[1:], queries_[1:]
            out.setdefault(r["skipping"], {})[x["filter"]] = {**x, "planning_seconds": statistics.median(plans),
                                                              "query_seconds": statistics.median(queries_)}
    return out


def verdict(r: dict[str, Any], truth: int, digest: str) -> str:
    if r["count"] < truth:
        return f"LOST {truth - r['count']}"
    return "" if r["digest"] == digest else "DIFFERS"


def report(name: str, filters: list[str], peer: dict[bool, dict[str, Any]], mine: dict[str, dict[str, Any]],
           mor: bool) -> list[dict[str, Any]]:
    print(f"\n{name}{' (merge-on-read: plain parquet reads base files only, no merge)' if mor else ''}")
    print(f"{'query':44} {'truth':>6} | {'reader':16} {'files':>6} {'bytes':>11} {'plan ms':>8} {'query ms':>9}  loss")
    out = []
    for f in filters:
        m = mine[f]
        rows = {"hudi skipping on": peer[True][f], "hudi skipping off": peer[False][f],
                "hudi-hive": m["hudi-hive"], "parquet": m["parquet"]}
        line = {"table": name, "filter": f, "truth": m["truth"], "readers": {}}
        for i, (reader, r) in enumerate(rows.items()):
            head = f"{f[:44]:44} {m['truth']:6d}" if i == 0 else " " * 51
            if r.get("skipped"):    # reads every file; not measured on this query
                print(f"{head} | {reader:16} {r['files']:6d} {r['bytes']:11,d} {'-':>8} {'-':>9}  (not measured: "
                      f"reads every file)")
                line["readers"][reader] = {"files": r["files"], "bytes": r["bytes"], "plan_s": None,
                                           "query_s": None, "rows": None, "loss": "", "measured": False}
                continue
            plan = r.get("plan", r.get("planning_seconds", 0.0))
            query = r.get("query", r.get("query_seconds", 0.0))
            loss = verdict(r, m["truth"], m["truth_digest"])
            if mor and reader == "parquet":
                loss = ""   # base files only: not a snapshot read
            print(f"{head} | {reader:16} {r['files']:6d} {r['bytes']:11,d} {plan * 1000:8.0f} {query * 1000:9.0f}  "
                  f"{loss}")
            line["readers"][reader] = {"files": r["files"], "bytes": r["bytes"], "plan_s": plan, "query_s": query,
                                       "rows": r["count"], "loss": loss, **({"why": r["why"]} if "why" in r else {})}
        out.append(line)
    return out


def verdicts(lines: list[dict[str, Any]]) -> list[str]:
    """One line per goal, from the per-query figures :func:`report` returns: (1) hudi-hive keeps no more files than
    Hudi's data skipping and loses no row (the queries where it keeps more named, each with what kept its files:
    :func:`why_kept`); (2) on selective queries (those where Hudi's data skipping reads fewer files than without it) hudi-hive's query time is at most Hudi's, and its planning is at least 5x faster (the
    median of Hudi's planning time over hudi-hive's, per query)."""
    more = [f"{x['table'][:24]}: {x['filter']}"
            + (f" ({x['readers']['hudi-hive']['why']})" if x["readers"]["hudi-hive"].get("why") else "")
            for x in lines if x["readers"]["hudi-hive"]["files"] > x["readers"]["hudi skipping on"]["files"]]
    lost = [f"{x['table'][:24]}: {x['filter']}" for x in lines if x["readers"]["hudi-hive"]["loss"]]
    goal1 = "met" if not more and not lost else "NOT met"
    out = [f"goal 1 (files <= Hudi's data skipping, no row lost): {goal1}: more files on {len(more)} of "
           f"{len(lines)} queries{': ' + '; '.join(more) if more else ''}; rows lost on {len(lost)}"
           f"{': ' + '; '.join(lost) if lost else ''}"]
    selective = [x for x in lines
                 if x["readers"]["hudi skipping on"]["files"] < x["readers"]["hudi skipping off"]["files"]]
    slower = [x["filter"] for x in selective
              if x["readers"]["hudi-hive"]["query_s"] > x["readers"]["hudi skipping on"]["query_s"]]
    ratios = [x["readers"]["hudi skipping on"]["plan_s"] / x["readers"]["hudi-hive"]["plan_s"]
              for x in lines if x["readers"]["hudi-hive"]["plan_s"] > 0]
    ratio = statistics.median(ratios) if ratios else 0.0
    goal2 = "met" if not slower and ratio >= 5 else "NOT met"
    out.append(f"goal 2 (query time <= Hudi's on selective queries, planning >= 5x faster): {goal2}: slower on "
               f"{len(slower)} of {len(selective)} selective queries{': ' + '; '.join(slower) if slower else ''}; "
               f"planning {ratio:.0f}x faster (median over {len(ratios)} queries)")
    return out


def interleaved(specs: list[dict[str, Any]], tables: list[tuple[str, str, bool, list[str]]], repeat: int,
                spark_session: Any, full_scans: int | None = None,
                ) -> tuple[dict[str, Any], dict[tuple[str, str], tuple[dict[bool, Any], Any]]]:
    """Both sessions alive at once: Hudi's driver (``hudi_peer.Session``) and hive-bridge's; per query, Hudi's
    reader (skipping on and off) and hive-bridge's (hudi-hive, parquet) one after the other, which goes first
    alternating from query to query. The readers that read every file (Hudi's without skipping, plain parquet)
    only on the first ``full_scans`` queries of each table (None: all)."""
    out: dict[tuple[str, str], tuple[dict[bool, Any], Any]] = {}
    with hudi_peer.Session({"write": specs, "driver_memory": "2g"}) as peer:
        spark = spark_session()
        i = 0
        for _, path, mor, filters in tables:
            mine = Ours(spark, path, mor, filters)
            for k, f in enumerate(filters):
                full = full_scans is None or k < full_scans

                def hudi(f: str = f, path: str = path, full: bool = full, mine: Ours = mine) -> dict[bool, Any]:
                    got = peer_medians(peer.read({"path": path, "filters": [f], "skipping": [True, False][:1 + full],
                                                  "rows": True, "repeat": repeat + 1}), warm=True)
                    return {True: got[True][f], False: got[False][f] if full else mine.every_file()}
                t0 = time.perf_counter()
                if i % 2 == 0:
                    theirs = hudi()
                    m = mine.measure(f, repeat, full)
                else:
                    m = mine.measure(f, repeat, full)
                    theirs = hudi()
                out[(path, f)] = (theirs, m)
                i += 1
                print(f"[{i}/{sum(len(t[3]) for t in tables)}] {f[:60]}: measured in {time.perf_counter() - t0:.0f} s")
        return peer.started, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=("spark_sql", "peers", "tpch"), default="spark_sql",
                    help="bench_spark_sql's tables (and the real ones), bench_peers' table, or TPC-H's 22 queries "
                         "(bench_hudi_tpch.py)")
    ap.add_argument("--files", type=int, help="files of the table (30 for spark_sql, 10,000 for peers)")
    ap.add_argument("--rows", type=int, help="rows a file (200 for spark_sql, 100 for peers)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--real", nargs="*", help=f"shared real tables (zip stems; with spark_sql: {', '.join(REAL)})")
    ap.add_argument("--sequential", action="store_true",
                    help="Hudi's reader first for every query (one JVM), then hive-bridge's (the former mode)")
    ap.add_argument("--full-scans", type=int, default=-1,
                    help="measure the readers that read every file (Hudi's without data skipping, plain parquet) on "
                         "the first N queries of a table only (interleaved; default: all, or 1 with peers, where "
                         "each such read of 10,000 files takes minutes)")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--scale", type=float, default=0.1, help="tpch: the scale factor")
    ap.add_argument("--rows-per-file", type=int, default=20_000, help="tpch: rows a base file")
    ap.add_argument("--queries", help="tpch: comma-separated query numbers (default all 22)")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)   # type: ignore[union-attr]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    if args.workload == "tpch":
        from bench_hudi_tpch import run_tpch

        run_tpch(args.scale, args.rows_per_file, args.repeat, args.json,
                 [int(q) for q in args.queries.split(",")] if args.queries else None)
        return
    why = hudi_peer.setup()
    if why is not None:
        raise SystemExit(f"the Hudi peer could not be set up: {why}")
    work = Path(tempfile.mkdtemp(prefix="bench-hudi-reader-"))
    atexit.register(shutil.rmtree, work, True)
    os.environ.setdefault("HIVE_BRIDGE_CACHE", str(work / "cache"))
    tables: list[tuple[str, str, bool, list[str]]] = []
    specs = []
    if args.workload == "peers":
        files, rows = args.files or 10_000, args.rows or 100
        root = work / f"peers_{files}x{rows}"
        spec, filters = peers_workload(root, files, rows)
        specs.append(spec)
        tables.append((f"bench_peers copy-on-write ({files:,} files, {files * rows:,} rows; written by Hudi 1.1)",
                       str(root), False, filters))
    else:
        files, rows = args.files or 30, args.rows or 200
        n = files * rows
        for mor in (False, True):
            root = work / f"{'mor' if mor else 'cow'}_{files}x{rows}"
            specs.append(workload(root, files, rows, mor))
            tables.append((f"bench_spark_sql {'merge-on-read' if mor else 'copy-on-write'} ({files} files, "
                           f"{n:,} rows; written by Hudi 1.1)", str(root), mor, queries(n, rows)))
    for name in args.real if args.real is not None else (REAL if args.workload == "spark_sql" else []):
        tables.append((name, str(unzip(name, work / name)), ".mor." in name, REAL.get(name, TXN)))
    from hive_bridge.spark import register, session

    def start() -> Any:
        spark = session("bench-hudi-reader")
        register(spark)
        return spark

    t0 = time.perf_counter()
    if args.sequential:
        out = hudi_peer.run({"write": specs, "driver_memory": "2g",
                             "read": [{"path": p, "filters": fs, "rows": True, "repeat": args.repeat}
                                      for _, p, _, fs in tables]})
        peer_all: dict[tuple[str, bool], dict[str, Any]] = {}
        for r in out["reads"]:
            for skipping, by_filter in peer_medians([r], warm=False).items():
                peer_all[(r["path"], skipping)] = by_filter
        spark = start()
        measured = {(p, f): ({True: peer_all[(p, True)][f], False: peer_all[(p, False)][f]}, None)
                    for _, p, _, fs in tables for f in fs}
        for _, path, mor, filters in tables:
            mine = Ours(spark, path, mor, filters)
            for f in filters:
                measured[(path, f)] = (measured[(path, f)][0], mine.measure(f, args.repeat))
        started = out
    else:
        spark_box: list[Any] = []

        def start_kept() -> Any:
            spark_box.append(start())
            return spark_box[0]

        full_scans = args.full_scans if args.full_scans >= 0 else (1 if args.workload == "peers" else None)
        started, measured = interleaved(specs, tables, args.repeat, start_kept, full_scans)
        spark = spark_box[0]
    total_s = time.perf_counter() - t0
    peer_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"Hudi's reader ({started['versions']['hudi']}, Spark {started['versions']['spark']}), "
          f"{'sequential' if args.sequential else 'interleaved per query'}: {total_s:.0f} s in all "
          f"(Hudi's writes {sum(c['seconds'] for w in started['written'] for c in w['commits']):.0f} s)")
    lines = []
    for name, path, mor, filters in tables:
        mine_by_f = {f: measured[(path, f)][1] for f in filters}
        peer = {True: {f: measured[(path, f)][0][True] for f in filters},
                False: {f: measured[(path, f)][0][False] for f in filters}}
        lines += report(name, filters, peer, mine_by_f, mor)
    print()
    for line in verdicts(lines):
        print(line)
    jvm_peak = jvm_peak_mib(spark)
    spark.stop()
    print(f"\npeak memory: python {python_peak_mib():.0f} MiB, "
          f"JVM {jvm_peak:.0f} MiB; Hudi's side (largest child process) {peer_rss:.0f} MiB; load average at the end "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    if args.json:
        Path(args.json).write_text(json.dumps({"versions": started["versions"], "queries": lines,
                                               "mode": "sequential" if args.sequential else "interleaved"},
                                              indent=1))


if __name__ == "__main__":
    main()
