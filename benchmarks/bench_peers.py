"""Peers on one table and one set of filters: hive-bridge, hudi-rs, PyIceberg and Spark's own parquet scan.

One generated copy-on-write Hudi table (table version 8, ``--files`` base files of ``--rows`` rows, written by
HudiWriter): ``event_id`` clustered (file k holds ids [k*rows, (k+1)*rows)), ``city`` a string clustered by ten
files with a few NULLs in every 50th file, ``amount`` a double (event_id / 2) that holds one -0.0 in ten files and
one NaN in four. Fourteen filters: bench_read's six on the key, then a string IN, a NOT IN, IS NULL, -0.0 and
NaN. The filters are SearchArgument text as Hive prints it, but for the NOT IN, given as HiveQL (Hive's
``hive.io.filter.text``): a printed SearchArgument's string IN list is split at spaces, so a value may hold one,
and hive-bridge never prunes with such an ambiguous list under a NOT (Hive's own serialized SearchArgument, and
its HiveQL, have no such ambiguity). Each is judged by

- **hive-bridge**: ``HudiTable.open`` + latest slices + the persisted column-statistics index + ``Pruner.run``
  with the SearchArgument itself;
- **hudi-rs 0.5**: ``HudiTableBuilder.build()`` + ``get_file_slices(HudiReadOptions(filters=[(col, op, value)]))``,
  its footer-based file pruning on copy-on-write. Its filters are a conjunction of ``=, !=, <, <=, >, >=, IN,
  NOT IN``: an OR of equalities on one column is sent as IN, a NOT of a comparison as the negated operator, a
  conjunct it cannot say (IS NULL, IS NOT NULL, NOT BETWEEN, an OR of other things) is left out of the filters
  and named in the row; a filter with nothing it can say is marked "cannot express";
- **PyIceberg 0.12**: the same parquet files (Hudi's meta columns included, as ``add_files`` reads them)
  registered in a SqlCatalog on sqlite, then ``load_table`` + ``scan(row_filter=...).plan_files()``; the whole
  filter is expressible (``= NaN`` becomes ``IsNaN``);
- **Spark** with its parquet filter pushdown on: ``spark.read.parquet(<every latest base file>).where(f).count()``.
  Spark skips row groups inside files, not files, so no "files kept" and no planning time: its whole query.

Measured: files kept (and the files that truly hold a match), planning time (median of ``--repeat`` runs after
one warm-up, each planner in its own process), Spark's query time (after one warm-up query; ``--spark-repeat``
runs, default 1: each scans every file), rows, and the row truth. The truth is Spark SQL with pushdown off
(one scan of every file, every filter counted per file); a planner's rows are the truth's rows of the files it
keeps (what Spark with pushdown off reads from them; checked for hive-bridge by reading its kept files with
``read_slices``), so rows a planner's pruning loses show as **LOST**. Peak memory: each planner's process, peak
RSS above its RSS after imports and set-up (native memory included); Spark: the JVM's peak RSS over the run.

Run: ``.venv/bin/python benchmarks/bench_peers.py [--files 10000] [--rows 100] [--repeat 3] [--spark-repeat 1]
[--keep DIR] [--markdown] [--json FILE]``. ``--keep DIR`` keeps the table, its index and the Iceberg catalog in DIR and
reuses them; ``--markdown`` also prints the one-row-per-filter table of the README.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sarg
from hive_bridge.filters.residual import to_sql
from sarg import Operator, TreeOperator

SCHEMA = {"event_id": "bigint", "city": "string", "amount": "double"}
PLANNERS = ("hive-bridge", "hudi-rs", "PyIceberg")
SPARK = "Spark pushdown"
ICEBERG_TABLE = "bench.events"


# ---------------------------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Layout:
    """What the generated table holds, from its size alone."""

    files: int
    rows: int

    @property
    def total(self) -> int:
        return self.files * self.rows

    def has_nulls(self, k: int) -> bool:          # 2 % of the files hold three NULL cities
        return k % 50 == 7

    def has_negative_zero(self, k: int) -> bool:  # ten files hold one -0.0
        stride = max(2, self.files // 10)
        return k % stride == stride // 2

    def has_nan(self, k: int) -> bool:            # four files hold one NaN
        stride = max(3, self.files // 4)
        return k % stride == stride // 3 + 1

    @staticmethod
    def city(k: int) -> str:                      # ten files per city
        return f"city-{k // 10:05d}"

    def chunk(self, start: int, stop: int) -> pa.Table:
        ids = range(start, stop)
        cities: list[str | None] = []
        amounts: list[float] = []
        for i in ids:
            k, offset = divmod(i, self.rows)
            cities.append(None if self.has_nulls(k) and offset in (1, 2, 3) else self.city(k))
            if offset == 5 and self.has_negative_zero(k):
                amounts.append(-0.0)
            elif offset == 7 and self.has_nan(k):
                amounts.append(math.nan)
            else:
                amounts.append(i * 0.5)
        return pa.table({"event_id": pa.array(ids, pa.int64()), "city": pa.array(cities, pa.string()),
                         "amount": pa.array(amounts, pa.float64())})


def build(root: Path, layout: Layout) -> None:
    from hive_bridge.testing.writer import HudiWriter

    writer = HudiWriter(root, table_name="bench_peers", version=8, record_key_fields=("event_id",),
                        rows_per_file=layout.rows)
    step = max(1, 200_000 // layout.rows) * layout.rows      # several commits keep memory small
    for start in range(0, layout.total, step):
        writer.insert(layout.chunk(start, min(layout.total, start + step)))


# ---------------------------------------------------------------------------------------------- the filters


@dataclass(frozen=True)
class Filter:
    label: str
    text: str

    def parse(self) -> sarg.SearchArgument:
        return sarg.read_filter(self.text, SCHEMA)      # SearchArgument text, or HiveQL


def filters(layout: Layout) -> list[Filter]:
    t, r = layout.total, layout.rows
    cities = (layout.files + 9) // 10
    some = " ".join(f"city-{cities * j // 1000:05d}" for j in (12, 345, 678))
    return [
        Filter("key =", f"leaf-(EQUALS event_id {t * 123456 // 1_000_000})"),
        Filter("key range", f"leaf-(BETWEEN event_id {t // 2} {t // 2 + t * 15 // 1000})"),
        Filter("key IN, NOT NULL", "(and leaf-(IN event_id 7 77 777 7777) (not leaf-(IS_NULL city)))"),
        Filter("OR of key =", f"(or leaf-(EQUALS event_id 42) leaf-(EQUALS event_id {t * 9 // 10 + 42}))"),
        Filter("NOT key <=", f"(not leaf-(LESS_THAN_EQUALS event_id {t - t // 200}))"),
        Filter("absent key", "leaf-(EQUALS event_id -5)"),
        Filter("string IN", f"leaf-(IN city {some})"),
        Filter("NOT IN, key <", f"event_id < {30 * r} and city not in ('city-00000', 'city-00001')"),
        Filter("IS NULL", "leaf-(IS_NULL city)"),
        Filter("IS NULL, key <", f"(and leaf-(IS_NULL city) leaf-(LESS_THAN event_id {t // 10}))"),
        Filter("= 0.0", "leaf-(EQUALS amount 0.0)"),
        Filter("= -0.0", "leaf-(EQUALS amount -0.0)"),
        Filter("NOT <= (NaN)", f"(not leaf-(LESS_THAN_EQUALS amount {(t - t // 500) * 0.5:.1f}))"),
        Filter("= NaN", "leaf-(EQUALS amount NaN)"),
    ]


class Inexpressible(Exception):
    """A filter, or a part of one, that a peer's filter language cannot say."""


def _leaf_of(node: sarg.ExpressionTree) -> sarg.PredicateLeaf:
    if node.operator is not TreeOperator.LEAF or node.leaf is None:
        raise Inexpressible(f"NOT of {node.operator.name}")
    leaf = node.leaf
    if leaf.has_unknown_literal:
        raise Inexpressible(f"{leaf} (unknown literal)")
    return leaf


# hudi-rs ------------------------------------------------------------------------------------------------

_HUDI_OPS = {Operator.EQUALS: "=", Operator.LESS_THAN: "<", Operator.LESS_THAN_EQUALS: "<="}
_HUDI_NOT_OPS = {Operator.EQUALS: "!=", Operator.LESS_THAN: ">=", Operator.LESS_THAN_EQUALS: ">"}


def _hudi_value(value: Any) -> str:
    if value is None:
        raise Inexpressible("a NULL literal")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else repr(value)
    return str(value)


def _hudi_list(values: Sequence[Any]) -> str:
    return ",".join(_hudi_value(v).replace("\\", "\\\\").replace(",", "\\,") for v in values)


def _hudi_conjunct(node: sarg.ExpressionTree) -> tuple[list[tuple[str, str, str]], list[str]]:
    """One conjunct as hudi-rs filter tuples (ANDed), and what was rewritten to say it."""
    op = node.operator
    if op is TreeOperator.LEAF:
        leaf = _leaf_of(node)
        if leaf.operator in _HUDI_OPS:
            return [(leaf.column, _HUDI_OPS[leaf.operator], _hudi_value(leaf.literal))], []
        if leaf.operator is Operator.IN:
            return [(leaf.column, "IN", _hudi_list(leaf.literals or ()))], []
        if leaf.operator is Operator.BETWEEN:
            lo, hi = leaf.literals or (None, None)
            return [(leaf.column, ">=", _hudi_value(lo)), (leaf.column, "<=", _hudi_value(hi))], []
        raise Inexpressible(f"{leaf.column} {'IS NULL' if leaf.operator is Operator.IS_NULL else leaf.operator}")
    if op is TreeOperator.NOT:
        leaf = _leaf_of(node.children[0])
        if leaf.operator in _HUDI_NOT_OPS:
            return [(leaf.column, _HUDI_NOT_OPS[leaf.operator], _hudi_value(leaf.literal))], ["NOT as negated op"]
        if leaf.operator is Operator.IN:
            return [(leaf.column, "NOT IN", _hudi_list(leaf.literals or ()))], []
        if leaf.operator is Operator.IS_NULL:
            raise Inexpressible(f"{leaf.column} IS NOT NULL")
        raise Inexpressible(f"NOT {leaf.operator}")
    if op is TreeOperator.OR:
        leaves = [c.leaf for c in node.children if c.operator is TreeOperator.LEAF and c.leaf is not None]
        if len(leaves) == len(node.children) and len({lf.column for lf in leaves}) == 1 and \
                all(lf.operator in (Operator.EQUALS, Operator.IN) and not lf.has_unknown_literal for lf in leaves):
            values = [v for lf in leaves for v in lf.values]
            return [(leaves[0].column, "IN", _hudi_list(values))], ["OR of = sent as IN"]
        raise Inexpressible("OR")
    raise Inexpressible(op.name)


def _conjuncts(node: sarg.ExpressionTree) -> list[sarg.ExpressionTree]:
    if node.operator is TreeOperator.AND:
        return [c for child in node.children for c in _conjuncts(child)]
    return [node]


def hudi_rs_filters(s: sarg.SearchArgument) -> tuple[list[tuple[str, str, str]], list[str]]:
    """The filter as hudi-rs's ANDed ``(column, op, value)`` tuples, and notes: rewrites, and the conjuncts left
    out because hudi-rs cannot say them (leaving a conjunct out only widens the filter: no row is lost by it)."""
    tuples: list[tuple[str, str, str]] = []
    notes: list[str] = []
    for node in _conjuncts(s.expression):
        try:
            more, why = _hudi_conjunct(node)
        except Inexpressible as exc:
            notes.append(f"{exc}: cannot express, left out")
            continue
        tuples += more
        notes += why
    if any(op in ("IN", "NOT IN") for _, op, _ in tuples):
        notes.append("IN/NOT IN not used to prune files")
    return tuples, notes


# PyIceberg ----------------------------------------------------------------------------------------------


def _ice() -> Any:
    """pyiceberg.expressions, untyped: its pydantic predicates' constructors do not type-check without
    pydantic's mypy plugin."""
    import importlib

    return importlib.import_module("pyiceberg.expressions")


class _IcebergExpression(sarg.TreeVisitor[Any]):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def visit_leaf(self, leaf: sarg.PredicateLeaf, leaf_id: int | None) -> Any:
        ice = _ice()
        if leaf.has_unknown_literal:
            raise Inexpressible(f"{leaf} (unknown literal)")
        col, op = leaf.column, leaf.operator
        values = leaf.values
        if op is Operator.IS_NULL:
            return ice.IsNull(col)
        if any(v is None for v in values):
            raise Inexpressible("a NULL literal")
        if any(isinstance(v, float) and math.isnan(v) for v in values):
            if op is Operator.EQUALS:
                self.notes.append("= NaN as IsNaN")
                return ice.IsNaN(col)
            raise Inexpressible(f"{op} NaN (Iceberg compares with NaN only by isNaN)")
        if op is Operator.EQUALS:
            return ice.EqualTo(col, leaf.literal)
        if op is Operator.LESS_THAN:
            return ice.LessThan(col, leaf.literal)
        if op is Operator.LESS_THAN_EQUALS:
            return ice.LessThanOrEqual(col, leaf.literal)
        if op is Operator.IN:
            return ice.In(col, set(values))
        if op is Operator.BETWEEN:
            lo, hi = values
            return ice.And(ice.GreaterThanOrEqual(col, lo), ice.LessThanOrEqual(col, hi))
        raise Inexpressible(str(op))

    def visit_constant(self, value: sarg.TruthValue) -> Any:
        raise Inexpressible(f"constant {value}")

    def visit_not(self, child: Any) -> Any:
        return _ice().Not(child)

    def visit_and(self, children: list[Any]) -> Any:
        return children[0] if len(children) == 1 else _ice().And(*children)

    def visit_or(self, children: list[Any]) -> Any:
        return children[0] if len(children) == 1 else _ice().Or(*children)


def iceberg_expression(s: sarg.SearchArgument) -> tuple[Any, list[str]]:
    visitor = _IcebergExpression()
    expr = sarg.visit(s.expression, visitor)
    return expr, visitor.notes


# ---------------------------------------------------------------------------------------------- planners


def _rss_kib(key: str) -> int:
    with open("/proc/self/status") as fh:
        m = re.search(rf"^{key}:\s+(\d+) kB", fh.read(), re.M)
    return int(m.group(1)) if m else 0


def _reset_peak_rss() -> bool:
    """Linux: reset the process's peak RSS (VmHWM) to its current RSS."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


Plan = Callable[[], list[str]]


def _hive_bridge_plans(root: Path, sargs: list[sarg.SearchArgument]) -> list[tuple[Plan | None, list[str]]]:
    from hive_bridge.pruning import Pruner
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable

    def plan(s: sarg.SearchArgument) -> Plan:
        def run() -> list[str]:
            table = HudiTable.open(root)
            result = Pruner(table, ColumnStatsIndex(table), table.latest_file_slices()).run(s)
            return [sl.base_file.name for sl in result.slices if sl.base_file is not None]
        return run

    return [(plan(s), []) for s in sargs]


def _hudi_rs_plans(root: Path, sargs: list[sarg.SearchArgument]) -> list[tuple[Plan | None, list[str]]]:
    from hudi import HudiReadOptions, HudiTableBuilder

    def plan(tuples: list[tuple[str, str, str]]) -> Plan:
        def run() -> list[str]:
            table = HudiTableBuilder.from_base_uri(str(root)).build()
            slices = table.get_file_slices(HudiReadOptions(filters=tuples))
            return [Path(sl.base_file_relative_path()).name for sl in slices]
        return run

    out: list[tuple[Plan | None, list[str]]] = []
    for s in sargs:
        tuples, notes = hudi_rs_filters(s)
        out.append((plan(tuples) if tuples else None, notes))
    return out


def _iceberg_catalog(work: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    folder = work / "iceberg"
    return SqlCatalog("bench", uri=f"sqlite:///{folder / 'catalog.db'}", warehouse=f"file://{folder / 'warehouse'}")


def _iceberg_plans(work: Path, sargs: list[sarg.SearchArgument]) -> list[tuple[Plan | None, list[str]]]:
    catalog = _iceberg_catalog(work)

    def plan(expr: Any) -> Plan:
        def run() -> list[str]:
            table = catalog.load_table(ICEBERG_TABLE)
            return [os.path.basename(task.file.file_path) for task in table.scan(row_filter=expr).plan_files()]
        return run

    out: list[tuple[Plan | None, list[str]]] = []
    for s in sargs:
        try:
            expr, notes = iceberg_expression(s)
        except Inexpressible as exc:
            out.append((None, [f"{exc}: cannot express"]))
            continue
        out.append((plan(expr), notes))
    return out


def plan_all(system: str, root: Path, work: Path, layout: Layout, repeat: int) -> dict[str, Any]:
    """Every filter planned by one system (in this process): kept base file names, times, peak memory."""
    sargs = [f.parse() for f in filters(layout)]
    if system == "hive-bridge":
        plans = _hive_bridge_plans(root, sargs)
    elif system == "hudi-rs":
        plans = _hudi_rs_plans(root, sargs)
    elif system == "PyIceberg":
        plans = _iceberg_plans(work, sargs)
    else:
        raise SystemExit(f"bench_peers: unknown planner {system!r} (one of {', '.join(PLANNERS)})")
    gc.collect()
    base = _rss_kib("VmRSS")
    exact = _reset_peak_rss()
    out: list[dict[str, Any]] = []
    for plan, notes in plans:
        if plan is None:
            out.append({"kept": None, "notes": notes, "times_s": []})
            continue
        kept = plan()                                # warm-up
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            again = plan()
            times.append(time.perf_counter() - t0)
            if sorted(again) != sorted(kept):
                raise SystemExit(f"bench_peers: {system} kept other files on a second planning of the same filter")
        out.append({"kept": sorted(kept), "notes": notes, "times_s": times})
    peak = _rss_kib("VmHWM")                       # without the reset: the process's peak, imports included
    return {"system": system, "filters": out, "rss_base_mib": base / 1024, "rss_peak_mib": max(0, peak - base) / 1024,
            "peak_exact": exact}


def _run_planner(system: str, root: Path, work: Path, layout: Layout, repeat: int) -> dict[str, Any]:
    """``plan_all`` in a fresh process, so that each planner's memory and caches are its own."""
    out = work / f"plan-{system}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--planner", system, "--table", str(root),
           "--work", str(work), "--files", str(layout.files), "--rows", str(layout.rows),
           "--repeat", str(repeat), "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise SystemExit(f"bench_peers: the {system} planner failed (exit {proc.returncode}):\n{tail}")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


# ---------------------------------------------------------------------------------------------- set-up


def prepare_table(work: Path, layout: Layout, log: Callable[[str], None]) -> Path:
    root = work / f"events_{layout.files}x{layout.rows}"
    marker = work / f"events_{layout.files}x{layout.rows}.built"
    if marker.is_file() and (root / ".hoodie" / "hoodie.properties").is_file():
        log(f"[build] reusing {root}")
        return root
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(work / "iceberg", ignore_errors=True)
    t0 = time.perf_counter()
    build(root, layout)
    marker.write_text("built\n")
    log(f"[build] {layout.files:,} base files x {layout.rows} rows written by HudiWriter (v8, copy-on-write) in "
        f"{time.perf_counter() - t0:.1f} s")
    return root


def prepare_index(root: Path, log: Callable[[str], None]) -> None:
    from hive_bridge.stats.index import ColumnStatsIndex
    from hive_bridge.table.table import HudiTable

    index = ColumnStatsIndex(HudiTable.open(root))
    t0 = time.perf_counter()
    index.load()
    c = index.last
    log(f"[hive-bridge] column-statistics index: {c.files_from_footers:,} footers read, {c.files_from_index:,} "
        f"files from the persisted index, in {time.perf_counter() - t0:.2f} s")


def prepare_iceberg(work: Path, paths: list[str], log: Callable[[str], None]) -> None:
    import pyarrow.parquet as pq

    folder = work / "iceberg"
    marker = folder / "registered.json"
    if marker.is_file() and json.loads(marker.read_text()).get("files") == len(paths):
        log(f"[PyIceberg] reusing the catalog in {folder}")
        return
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    catalog = _iceberg_catalog(work)
    catalog.create_namespace("bench")
    schema = pq.read_schema(paths[0])
    table = catalog.create_table(ICEBERG_TABLE, schema=schema)
    t0 = time.perf_counter()
    table.add_files(paths, check_duplicate_files=False)
    log(f"[PyIceberg] {len(paths):,} parquet files registered with add_files (all {len(schema)} columns, Hudi's "
        f"meta columns included) in a sqlite SqlCatalog in {time.perf_counter() - t0:.1f} s")
    marker.write_text(json.dumps({"files": len(paths)}))


# ---------------------------------------------------------------------------------------------- the run


@dataclass
class Row:
    index: int
    label: str
    text: str
    system: str
    kept: int | None          # None: cannot express (planners) or not observable (Spark)
    ideal: int
    files: int
    plan_s: float | None
    query_s: float | None
    rows: int | None
    truth: int
    notes: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return 0 if self.rows is None else self.truth - self.rows


@dataclass
class Report:
    files: int
    rows: list[Row]
    memory: dict[str, str]
    lines: list[str]


def run(layout: Layout, work: Path, repeat: int, spark: Any = None, log: Callable[[str], None] = print,
        spark_repeat: int = 1) -> Report:
    from hive_bridge.spark import CACHE_PRUNING, PARQUET_PUSHDOWN, read_slices, spark_schema
    from hive_bridge.spark.start import start_session
    from hive_bridge.table.table import HudiTable

    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        log(line)

    root = prepare_table(work, layout, say)
    prepare_index(root, say)
    table = HudiTable.open(root)
    slices = {sl.base_file.name: sl for sl in table.latest_file_slices() if sl.base_file is not None}
    paths = sorted(sl.base_file.full_path for sl in slices.values() if sl.base_file is not None)
    prepare_iceberg(work, paths, say)
    flts = filters(layout)
    sqls = [to_sql(f.parse()) for f in flts]

    planned = {}
    for system in PLANNERS:
        t0 = time.perf_counter()
        planned[system] = _run_planner(system, root, work, layout, repeat)
        say(f"[{system}] {len(flts)} filters planned {repeat + 1} times each in {time.perf_counter() - t0:.1f} s "
            f"(a process of its own)")

    own_spark = spark is None
    if own_spark:
        spark = start_session("bench-peers")
    old_pushdown = spark.conf.get(PARQUET_PUSHDOWN, "true")
    old_cache_pruning = spark.conf.get(CACHE_PRUNING, "true")
    old_threshold = spark.conf.get("spark.sql.sources.parallelPartitionDiscovery.threshold", "32")
    try:
        from pyspark.sql import functions as F

        file_schema = spark_schema(table.file_schema())
        spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", str(len(paths) + 1))
        spark.conf.set(CACHE_PRUNING, "false")          # as read_slices wants it (nothing here is cached)

        def scan() -> Any:
            return spark.read.schema(file_schema).parquet(*paths)

        # the truth: Spark SQL, pushdown off, every filter counted per file in one scan
        spark.conf.set(PARQUET_PUSHDOWN, "false")
        t0 = time.perf_counter()
        aggs = [F.sum(F.when(F.expr(sql), 1).otherwise(0)).alias(f"m{i}") for i, sql in enumerate(sqls)]
        per_file = {r["file"]: [int(r[f"m{i}"]) for i in range(len(sqls))]
                    for r in scan().groupBy(F.col("_metadata.file_name").alias("file")).agg(*aggs).collect()}
        say(f"[truth] Spark SQL, pushdown off: one scan of the {len(paths):,} files, {len(sqls)} filters counted "
            f"per file, in {time.perf_counter() - t0:.1f} s")
        if set(per_file) != set(slices):
            raise SystemExit("bench_peers: Spark's scan and the table's latest base files differ")
        truth = [sum(m[i] for m in per_file.values()) for i in range(len(sqls))]
        ideal = [sum(1 for m in per_file.values() if m[i]) for i in range(len(sqls))]

        # Spark's own scan with its parquet filter pushdown on
        spark.conf.set(PARQUET_PUSHDOWN, "true")
        scan().where(sqls[0]).count()                                      # warm-up
        spark_rows: list[int] = []
        spark_times: list[float] = []
        for f, sql in zip(flts, sqls, strict=True):
            times = []
            for _ in range(spark_repeat):
                t0 = time.perf_counter()
                n = scan().where(sql).count()
                times.append(time.perf_counter() - t0)
            spark_rows.append(n)
            spark_times.append(statistics.median(times))
            say(f"[{SPARK}] {f.label}: {n:,} rows in {spark_times[-1]:.1f} s")

        # hive-bridge's kept files read the way it reads them, pushdown off: the per-file truth adds up
        spark.conf.set(PARQUET_PUSHDOWN, "false")
        for i, entry in enumerate(planned["hive-bridge"]["filters"]):
            kept = entry["kept"]
            if len(kept) == len(slices):
                continue                                                   # every file: the truth itself
            read = read_slices(spark, table, [slices[k] for k in kept]).where(sqls[i]).count()
            expect = sum(per_file[k][i] for k in kept)
            if read != expect:
                raise SystemExit(f"bench_peers: {flts[i].text}: hive-bridge's kept files read {read} rows, the "
                                 f"per-file truth says {expect}")
        jvm = _jvm_peak(spark)
    finally:
        spark.conf.set(PARQUET_PUSHDOWN, old_pushdown)
        spark.conf.set(CACHE_PRUNING, old_cache_pruning)
        spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", old_threshold)
        if own_spark:
            spark.stop()

    rows: list[Row] = []
    for i, f in enumerate(flts):
        for system in PLANNERS:
            entry = planned[system]["filters"][i]
            kept = entry["kept"]
            rows.append(Row(i + 1, f.label, f.text, system, None if kept is None else len(kept), ideal[i],
                            len(paths), statistics.median(entry["times_s"]) if kept is not None else None, None,
                            None if kept is None else sum(per_file[k][i] for k in kept), truth[i],
                            list(entry["notes"])))
        rows.append(Row(i + 1, f.label, f.text, SPARK, None, ideal[i], len(paths), None, spark_times[i],
                        spark_rows[i], truth[i], ["skips row groups inside files: files kept not observable"]))
    memory = {s: f"peak RSS {planned[s]['rss_peak_mib']:.0f} MiB above the {planned[s]['rss_base_mib']:.0f} MiB "
                 f"after imports{'' if planned[s]['peak_exact'] else ' (the peak of the whole process)'}"
              for s in PLANNERS}
    memory[SPARK] = jvm
    return Report(len(paths), rows, memory, lines)


def _jvm_peak(spark: Any) -> str:
    try:
        pid = spark.sparkContext._gateway.proc.pid
        with open(f"/proc/{pid}/status") as fh:
            m = re.search(r"^VmHWM:\s+(\d+) kB", fh.read(), re.M)
        return f"JVM peak RSS {int(m.group(1)) / 1024:.0f} MiB over the whole run" if m else "n/a"
    except (AttributeError, OSError):
        return "n/a (the JVM's process is not visible)"


# ---------------------------------------------------------------------------------------------- output


def _ms(s: float | None) -> str:
    return "" if s is None else f"{s * 1000:,.1f}"


def _verdict(r: Row) -> str:
    if r.rows is None:
        return "; ".join(r.notes)
    out = [f"LOST {r.lost:,} ROWS"] if r.lost > 0 else []
    return "; ".join(out + r.notes)


def print_table(report: Report, log: Callable[[str], None] = print) -> None:
    head = f"{'system':15} {'kept':>7} {'ideal':>6} {'plan ms':>9} {'query s':>8} {'rows':>9} {'truth':>9}  note"
    log(head)
    for r in report.rows:
        if r.system == PLANNERS[0]:
            log(f"[{r.index}] {r.label}: {r.text}")
        kept = "n/a" if r.kept is None else f"{r.kept:,}"
        rows = "n/a" if r.rows is None else f"{r.rows:,}"
        query = "" if r.query_s is None else f"{r.query_s:.2f}"
        log(f"  {r.system:13} {kept:>7} {r.ideal:>6,} {_ms(r.plan_s):>9} {query:>8} {rows:>9} {r.truth:>9,}  "
            f"{_verdict(r)}")
    for system in (*PLANNERS, SPARK):
        mine = [r for r in report.rows if r.system == system]
        lost = [r for r in mine if r.lost > 0]
        said = [r for r in mine if r.kept is not None]
        what = (f"median planning {statistics.median(r.plan_s for r in said if r.plan_s is not None) * 1000:,.1f} "
                f"ms, files kept {sum(r.kept or 0 for r in said):,} (ideal {sum(r.ideal for r in said):,}) over "
                f"the {len(said)} filters it can say" if system != SPARK else
                f"median query {statistics.median(r.query_s for r in mine if r.query_s is not None):.2f} s")
        log(f"{system}: {what}; rows lost on {len(lost)} filters"
            f"{' (' + ', '.join(r.label for r in lost) + ')' if lost else ''}; memory: {report.memory[system]}")


def markdown(report: Report) -> str:
    """One row per filter: each system's files kept (or Spark's rows), lost rows in bold."""
    out = ["| filter | files with a match | hive-bridge | hudi-rs | PyIceberg | Spark, pushdown on (rows) | "
           "truth (rows) |", "|---|---:|---:|---:|---:|---:|---:|"]
    by: dict[tuple[int, str], Row] = {(r.index, r.system): r for r in report.rows}
    for i in sorted({r.index for r in report.rows}):
        first = by[(i, PLANNERS[0])]
        cells = [f"`{first.text}`", f"{first.ideal:,}"]
        for system in PLANNERS:
            r = by[(i, system)]
            if r.kept is None:
                cells.append("cannot express")
                continue
            cell = f"{r.kept:,} · {_ms(r.plan_s)} ms"
            if r.lost > 0:
                cell += f" **LOST {r.lost:,} rows**"
            cells.append(cell)
        s = by[(i, SPARK)]
        cells.append(f"{s.rows:,}" + (f" **LOST {s.lost:,}**" if s.lost > 0 else ""))
        cells.append(f"{s.truth:,}")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000, help="base files of the table (default 10,000)")
    ap.add_argument("--rows", type=int, default=100, help="rows per file (default 100)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each planning and query (default 3)")
    ap.add_argument("--spark-repeat", type=int, default=1,
                    help="timed runs of each Spark query (default 1: each scans every file)")
    ap.add_argument("--keep", type=Path, default=None, help="folder to keep the table and catalog in (reused)")
    ap.add_argument("--markdown", action="store_true", help="also print the README's one-row-per-filter table")
    ap.add_argument("--json", type=Path, default=None, help="write every row as JSON to this file")
    ap.add_argument("--planner", choices=PLANNERS, help=argparse.SUPPRESS)
    ap.add_argument("--table", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.files < 100 or args.rows < 10 or args.files * args.rows < 10_000 or min(args.repeat,
                                                                                    args.spark_repeat) < 1:
        ap.error("--files >= 100, --rows >= 10, --files x --rows >= 10,000, --repeat and --spark-repeat >= 1 (the "
                 "filters' values and the NULL, -0.0 and NaN files need that much)")
    layout = Layout(args.files, args.rows)
    if args.planner:                               # a planner's own process (see _run_planner)
        result = plan_all(args.planner, args.table, args.work, layout, args.repeat)
        args.out.write_text(json.dumps(result))
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_peers_"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, work folder {work}")
    try:
        report = run(layout, work, args.repeat, spark_repeat=args.spark_repeat)
        print()
        print_table(report)
        if args.markdown:
            print()
            print(markdown(report))
        if args.json:
            args.json.write_text(json.dumps({"files": report.files, "memory": report.memory,
                                             "rows": [asdict(r) for r in report.rows]}, indent=1))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    main()
