"""Hudi's own Spark writer and reader, driven from JSON: run by the peer's Python (pyspark 3.5 with Hudi's Spark
bundle; ``tools/hudi_peer.py`` sets it up and calls this), one Spark session for the whole spec.

    .cache/hudi-peer/venv/bin/python tools/hudi_peer_driver.py SPEC.json OUT.json
    .cache/hudi-peer/venv/bin/python tools/hudi_peer_driver.py --serve SPEC.json

``--serve`` keeps the session alive for a caller that interleaves its own reads with Hudi's
(``benchmarks/bench_hudi_reader.py``): it runs the spec's ``sql_first``, ``write`` and ``sql``, prints one line
``@@hudi-peer {"versions": ..., "written": ..., "sql": ...}``, then reads ``read`` jobs (below) from stdin, one JSON
object a line, and answers each with one line ``@@hudi-peer [reads]`` (or ``@@hudi-peer {"error": ...}``), or a
SQL job ``{sql, views: {name: path}, skipping, repeat}`` (a query over temp views of Hudi's reader, e.g. TPC-H's)
with ``@@hudi-peer {rows, files, seconds_runs}`` (:func:`sql_query`), until
an empty line or the end of stdin. One DataFrame per path and options is kept between jobs, as a user keeps one.
Only lines starting with ``@@hudi-peer`` are answers (the JVM may print on stdout too).

SPEC (JSON; NaN and -0.0 as Python's ``json`` writes them):

- ``jar``, ``work``: the bundle and a scratch folder (set by :func:`hudi_peer.run`);
- ``write``: tables to write, each ``{path, name, type: COPY_ON_WRITE|MERGE_ON_READ, key: "id" or "a,b",
  ordering: "ts", partition: "region" or null, schema: "id bigint, ...", metadata: {column_stats, partition_stats,
  record_index} (booleans), columns: [...] (column stats' columns; default all), options: {...},
  commits: [{op: insert|upsert|delete|bulk_insert, rows: [[...], ...] or parquet: "file or folder" (read by
  Spark, its columns cast to ``schema``'s types: large inputs, NaN, dates and decimals), files: N (Spark
  partitions, so files per Hudi partition with ``bulk_insert``, each a range of ``sort``, default the first key
  field), options: {...}}]}``; every commit is one write (``mode("append")``, the first creates); a commit
  ``{op: sql, statements: [...]}`` runs Spark SQL on the table instead (registered under ``name`` at its path;
  ``{name}`` in a statement is the table's name), e.g. ``CREATE INDEX merchant_idx ON {name} (merchant)``: a
  secondary index, which later writes keep up to date;
- ``sql``: Spark SQL statements run after the writes and before the reads, each as given (e.g. the ``CALL
  run_clustering(...)`` that ``hive-bridge advise`` prints), with Hudi's session extension; ``sql_first``: the
  same before the writes (session settings a write needs, e.g. the ``SET`` statements the advice prints);
- ``read``: ``{path, filters: [...], skipping: [true, false], rows: true (sorted ``to_json`` rows) or false
  (count and digest), repeat: 1, options: {...}}`` each;
- ``query``: ``{path, options: {...} (e.g. ``as.of.instant``, or ``hoodie.datasource.query.type=incremental`` with
  begin / end instant times), filters: [...]}`` each: every row the read returns (one Spark job), as ``{j: sorted
  to_json of the data columns, p: _hoodie_partition_path, f: _hoodie_file_name, c: _hoodie_commit_time, m: [does
  filter i match]}``, or the error the read raised (``error``: its class and first lines);
- ``splits``: ``{format: HoodieParquetInputFormat|HoodieParquetRealtimeInputFormat, conf: {JobConf key: value}}``
  each: the paths of the splits Hudi's own input format (from the bundle) makes for that JobConf
  (``getSplits``: Hive's call; a realtime split's log files too), or the error.

OUT: ``{"versions": {...}, "written": [{path, commits: [{op, seconds}], table_version}], "sql": [{statement, rows,
seconds}], "queries": [{rows | error}], "splits": [{files | error}], "reads": [{path,
skipping, load_seconds, results: [{filter, count, digest, rows?, files, bytes, file_groups, planning_seconds,
query_seconds, listing_ms}]}]}``. ``files``/``bytes``: the scan's "number of files read" and "size of files read";
``file_groups``: the file ids of what Hudi's file index kept (``partition/fileId``); ``planning_seconds``: making
the physical plan and the file index's listing of the scan (``listing_ms``: the scan's own "metadata time");
``query_seconds``: running it (collect); ``jvm_peak_mib``: the driver JVM's peak resident set from planning to the
end of the run (Linux's VmHWM, reset before planning; 0 where it cannot be read). Adaptive execution is off (one plan, its metrics read after the run).

Nothing here imports hive-bridge: this runs beside it, not in its environment.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


def session(spec: dict[str, Any]) -> Any:
    from pyspark.sql import SparkSession

    work = Path(spec["work"])
    work.mkdir(parents=True, exist_ok=True)
    spark = (SparkSession.builder.master("local[2]").appName("hudi-peer")
             .config("spark.jars", spec["jar"])
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.memory", spec.get("driver_memory", "1g"))
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.adaptive.enabled", "false")
             .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
             .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
             .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
             .config("spark.sql.warehouse.dir", str(work / "warehouse"))
             .config("spark.local.dir", str(work / "tmp"))
             .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={work}")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write_options(table: dict[str, Any]) -> dict[str, str]:
    md = table.get("metadata") or {}
    opts = {
        "hoodie.table.name": table["name"],
        "hoodie.datasource.write.table.type": table["type"],
        "hoodie.datasource.write.recordkey.field": table["key"],
        "hoodie.datasource.write.precombine.field": table.get("ordering", "ts"),
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.index.column.stats.enable": str(bool(md.get("column_stats", True))).lower(),
        "hoodie.metadata.index.partition.stats.enable": str(bool(md.get("partition_stats", False))).lower(),
        "hoodie.metadata.record.index.enable": str(bool(md.get("record_index", False))).lower(),
        # every insert makes new file groups (no packing into earlier small files)
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.embed.timeline.server": "false",
        "hoodie.insert.shuffle.parallelism": "2", "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2", "hoodie.bulkinsert.shuffle.parallelism": "2",
        "hoodie.clean.automatic": "false",
        # bulk_insert keeps the input's partitioning: one file a Spark partition (insert shuffles its own)
        "hoodie.bulkinsert.sort.mode": "NONE",
        # a small table: one file group of record index (ten by default), written and read faster
        "hoodie.metadata.record.index.min.filegroup.count": "1",
        "hoodie.metadata.record.index.max.filegroup.count": "1",
    }
    if "," in table["key"]:
        opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.ComplexKeyGenerator"
    if table.get("partition"):
        opts["hoodie.datasource.write.partitionpath.field"] = table["partition"]
    else:
        opts["hoodie.datasource.write.partitionpath.field"] = ""
        if "," not in table["key"]:     # a complex key stays complex (an empty partition path)
            opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    if table.get("columns"):
        opts["hoodie.metadata.index.column.stats.column.list"] = ",".join(table["columns"])
    opts.update({k: str(v) for k, v in (table.get("options") or {}).items()})
    return opts


def write(spark: Any, table: dict[str, Any]) -> dict[str, Any]:
    from pyspark.sql import functions as F

    base = write_options(table)
    done = []
    for commit in table["commits"]:
        if commit["op"] == "sql":
            t0 = time.perf_counter()
            spark.sql(f"CREATE TABLE IF NOT EXISTS {table['name']} USING hudi LOCATION '{table['path']}'")
            # building an index runs its own write client, which asks for a lock provider (one writer here)
            spark.sql("SET hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.InProcessLockProvider")
            for statement in commit["statements"]:
                spark.sql(statement.replace("{name}", table["name"]))
            done.append({"op": "sql", "seconds": time.perf_counter() - t0})
            continue
        if commit.get("parquet"):
            types = spark.createDataFrame([], schema=table["schema"]).schema
            df = spark.read.parquet(commit["parquet"]).select(*[F.col(f"`{t.name}`").cast(t.dataType).alias(t.name)
                                                               for t in types])
        else:
            df = spark.createDataFrame([tuple(r) for r in commit["rows"]], schema=table["schema"])
        if commit.get("files"):   # key ranges: each Spark partition (so each file) a range of the sort column
            df = df.repartitionByRange(int(commit["files"]), commit.get("sort", table["key"].split(",")[0]))
        opts = {**base, "hoodie.datasource.write.operation": commit["op"],
                **{k: str(v) for k, v in (commit.get("options") or {}).items()}}
        t0 = time.perf_counter()
        df.write.format("hudi").options(**opts).mode("append").save(table["path"])
        done.append({"op": commit["op"], "seconds": time.perf_counter() - t0})
    props = Path(table["path"], ".hoodie", "hoodie.properties").read_text()
    version = next((line.split("=", 1)[1].strip() for line in props.splitlines()
                    if line.startswith("hoodie.table.version=")), "")
    return {"path": table["path"], "commits": done, "table_version": version}


def _scans(plan: Any, jvm: Any) -> list[Any]:
    leaves = jvm.scala.collection.JavaConverters.seqAsJavaList(plan.collectLeaves())
    return [leaf for leaf in leaves if "FileSourceScan" in leaf.getClass().getName()]


def _metric(scan: Any, name: str) -> int:
    opt = scan.metrics().get(name)
    return int(opt.get().value()) if opt.isDefined() else 0


def _file_groups(scan: Any, jvm: Any) -> list[str]:
    """partition/fileId of every file the scan's file index kept (Hudi's base or log file names)."""
    out = set()
    for pd in scan.selectedPartitions():
        for f in jvm.scala.collection.JavaConverters.seqAsJavaList(pd.files()):
            path = f.fileStatus().getPath() if hasattr(f, "fileStatus") else f.getPath()
            out.add(f"{path.getParent().getName()}/{file_id(path.getName())}")
    return sorted(out)


def file_id(name: str) -> str:
    """The file group id in a base file's (``id_token_instant.parquet``) or log file's (``.id_instant.log...``)
    name."""
    return name.lstrip(".").split("_", 1)[0]


def _json_col(df: Any) -> Any:
    from pyspark.sql import functions as F

    cols = sorted(c for c in df.columns if c not in META)
    return F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols]))


def _json_rows(df: Any) -> Any:
    return df.select(_json_col(df).alias("j"))


def _jvm_peak(spark: Any, reset: bool) -> float:
    """The driver JVM's peak resident set (MiB, VmHWM), or with ``reset`` set it to the current one first."""
    pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    try:
        if reset:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        status = Path(f"/proc/{pid}/status").read_text()
        return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration, ValueError):
        return 0.0


def read_one(spark: Any, df: Any, where: str, want_rows: bool, want_groups: bool) -> dict[str, Any]:
    from pyspark.sql import functions as F

    jvm = spark.sparkContext._jvm
    q = _json_rows(df.where(where))
    if want_groups:   # the matching rows' own file groups (Hudi's _hoodie_file_name): the files that must be kept
        q = df.where(where).select(F.col("_hoodie_partition_path").alias("p"), F.col("_hoodie_file_name").alias("f"),
                                   _json_col(df).alias("j"))
    _jvm_peak(spark, reset=True)
    t0 = time.perf_counter()
    qe = q._jdf.queryExecution()
    plan = qe.executedPlan()
    scans = _scans(plan, jvm)
    groups: list[str] = []
    for scan in scans:
        groups += _file_groups(scan, jvm)      # forces the file index's listing (pruning) now
    t1 = time.perf_counter()
    # the listing's metrics, read before the run (running the plan starts its metrics afresh)
    listed = {"files": sum(_metric(s, "numFiles") for s in scans),
              "bytes": sum(_metric(s, "filesSize") for s in scans),
              "listing_ms": sum(_metric(s, "metadataTime") for s in scans)}
    got = q.collect()
    t2 = time.perf_counter()
    peak = _jvm_peak(spark, reset=False)
    rows = sorted(r["j"] for r in got)
    digest = hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]
    out = {"filter": where, "count": len(rows), "digest": digest, **listed, "file_groups": sorted(set(groups)),
           "planning_seconds": t1 - t0, "query_seconds": t2 - t1, "jvm_peak_mib": peak}
    if want_rows:
        out["rows"] = rows
    if want_groups:
        out["match_groups"] = sorted({f"{r['p'] or ''}/{file_id(r['f'])}" for r in got})
    return out


def _frame(spark: Any, path: str, skipping: bool, options: dict[str, Any] | None,
           frames: dict[str, Any] | None) -> Any:
    """Hudi's reader on ``path`` with data skipping on or off, loaded once per path and options in ``frames``."""
    on = str(bool(skipping)).lower()
    opts = {"hoodie.metadata.enable": on, "hoodie.enable.data.skipping": on,
            "hoodie.metadata.index.column.stats.enable": on, **{k: str(v) for k, v in (options or {}).items()}}
    key = json.dumps([path, opts], sort_keys=True)
    df = frames.get(key) if frames is not None else None
    if df is None:
        df = spark.read.format("hudi").options(**opts).load(path)
        if frames is not None:
            frames[key] = df
    return df


def plain(value: Any) -> Any:
    """A result value as JSON carries it alike from either Spark: numbers (decimals as floats), strings, None;
    dates and anything else as ``str``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value).__name__ == "Decimal":
        return float(value)
    return str(value)


def sql_query(spark: Any, job: dict[str, Any], frames: dict[str, Any]) -> dict[str, Any]:
    """``job["sql"]`` over temp views of Hudi's reader (``views``: {name: path}; data skipping ``skipping``), run
    ``repeat`` times: the last run's rows (:func:`plain` values), the files its scans read (every scan of the
    plan once, subqueries included) and each run's seconds (planning and running: ``spark.sql`` to ``collect``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_tpch import scan_files

    for name, path in job["views"].items():
        _frame(spark, path, bool(job.get("skipping", True)), job.get("options"), frames).createOrReplaceTempView(name)
    runs, rows, files = [], [], 0
    for _ in range(int(job.get("repeat", 1))):
        t0 = time.perf_counter()
        df = spark.sql(job["sql"])
        rows = df.collect()
        runs.append(time.perf_counter() - t0)
        files = scan_files(df)
    return {"rows": [[plain(v) for v in r] for r in rows], "files": files, "seconds_runs": runs}


def read(spark: Any, job: dict[str, Any], frames: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each filter of ``job`` read with data skipping on and off; ``frames`` keeps the loaded DataFrames between
    calls (keyed by path and options; ``load_seconds`` is then 0 for a DataFrame already loaded)."""
    out = []
    for skipping in job.get("skipping", [True, False]):
        t0 = time.perf_counter()
        df = _frame(spark, job["path"], bool(skipping), job.get("options"), frames)
        load = time.perf_counter() - t0
        results = []
        for where in job["filters"]:
            groups = not skipping and bool(job.get("rows", True)) and "_hoodie_file_name" in df.columns
            runs = [read_one(spark, df, where, bool(job.get("rows", True)), groups)
                    for _ in range(int(job.get("repeat", 1)))]
            best = runs[-1]
            best["planning_runs"] = [r["planning_seconds"] for r in runs]
            best["query_runs"] = [r["query_seconds"] for r in runs]
            results.append(best)
        out.append({"path": job["path"], "skipping": bool(skipping), "load_seconds": load, "results": results})
    return out


def run_sql(spark: Any, statement: str) -> dict[str, Any]:
    """One statement as given; its result rows as strings."""
    t0 = time.perf_counter()
    rows = [[None if v is None else str(v) for v in r] for r in spark.sql(statement).collect()]
    return {"statement": statement, "rows": rows, "seconds": time.perf_counter() - t0}


def _error(exc: BaseException) -> str:
    """An exception's class and the first lines of its message (a Java exception's own, through py4j)."""
    java = getattr(exc, "java_exception", None)
    text = f"{java.getClass().getName()}: {java.getMessage()}" if java is not None else f"{type(exc).__name__}: {exc}"
    return "\n".join(text.strip().splitlines()[:6])


def query(spark: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Every row a read with ``job["options"]`` returns, each with whether each filter matches it."""
    from pyspark.sql import functions as F

    try:
        df = spark.read.format("hudi").options(**{k: str(v) for k, v in job["options"].items()}).load(job["path"])
        marks = [F.coalesce(F.expr(f), F.lit(False)).alias(f"m{i}") for i, f in enumerate(job["filters"])]
        got = df.select(_json_col(df).alias("j"), F.col("_hoodie_partition_path").alias("p"),
                        F.col("_hoodie_file_name").alias("f"), F.col("_hoodie_commit_time").alias("c"),
                        *marks).collect()
    except Exception as exc:  # Hudi's answer is its error: recorded, compared by the tests
        return {"error": _error(exc)}
    n = len(job["filters"])
    return {"rows": [{"j": r["j"], "p": r["p"] or "", "f": r["f"] or "", "c": r["c"],
                      "m": [bool(r[f"m{i}"]) for i in range(n)]} for r in got]}


def splits(spark: Any, job: dict[str, Any]) -> dict[str, Any]:
    """The files of the splits Hudi's input format makes for a JobConf (base files; a realtime split's logs)."""
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.mapred.JobConf(spark.sparkContext._jsc.hadoopConfiguration())
    for key, value in job["conf"].items():
        conf.set(key, str(value))
    try:
        fmt = getattr(jvm.org.apache.hudi.hadoop, job["format"])() if "Realtime" not in job["format"] \
            else getattr(jvm.org.apache.hudi.hadoop.realtime, job["format"])()
        fmt.setConf(conf)
        files = set()
        for split in fmt.getSplits(conf, 1):
            files.add(str(split.getPath()))
            if "Realtime" in split.getClass().getName():     # a realtime split: its base file's log files too
                files.update(str(x) for x in split.getDeltaLogPaths())
    except Exception as exc:  # as in query
        return {"error": _error(exc)}
    return {"files": sorted(files)}


def _prepare(spark: Any, spec: dict[str, Any]) -> tuple[dict[str, str], list[Any], list[Any]]:
    """What both modes do first: ``sql_first``, the writes, ``sql``; (versions, written, statements)."""
    statements = [run_sql(spark, s) for s in spec.get("sql_first", [])]
    written = [write(spark, t) for t in spec.get("write", [])]
    statements += [run_sql(spark, s) for s in spec.get("sql", [])]
    return {"spark": spark.version, "hudi": Path(spec["jar"]).name}, written, statements


def main(spec_path: str, out_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    spark = session(spec)
    try:
        versions, written, statements = _prepare(spark, spec)
        reads = [r for job in spec.get("read", []) for r in read(spark, job)]
        queries = [query(spark, job) for job in spec.get("query", [])]
        listed = [splits(spark, job) for job in spec.get("splits", [])]
    finally:
        spark.stop()
    Path(out_path).write_text(json.dumps({"versions": versions, "written": written, "sql": statements,
                                          "reads": reads, "queries": queries, "splits": listed}))


MARK = "@@hudi-peer "


def serve(spec_path: str) -> None:
    """The long-lived mode (see the module's docstring): writes first, then ``read`` jobs from stdin."""
    spec = json.loads(Path(spec_path).read_text())
    spark = session(spec)
    try:
        versions, written, statements = _prepare(spark, spec)
        print(MARK + json.dumps({"versions": versions, "written": written, "sql": statements}), flush=True)
        frames: dict[str, Any] = {}
        for line in sys.stdin:
            if not line.strip():
                break
            try:
                job = json.loads(line)
                answer: Any = sql_query(spark, job, frames) if "sql" in job else read(spark, job, frames)
            except Exception as exc:  # the caller gets the error and decides; the session stays up
                answer = {"error": _error(exc)}
            print(MARK + json.dumps(answer), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
