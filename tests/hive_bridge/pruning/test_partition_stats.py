"""Whole partitions dropped by the metadata table's partition statistics (`hive_bridge.pruning.partition_pruning`):
on every real table that has them, random filters keep every file group holding a matching row (truth: the rows
hudi-rs merges, judged with SQL's three-valued logic) and exactly what the files' own statistics keep; a filter
that excludes whole partitions never looks their files up; a metadata table that lags is not trusted."""

from __future__ import annotations

import datetime as dt
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.mdt.records import ColumnStatsEntry
from hive_bridge.pruning.partition_pruning import partition_stats_problem
from hive_bridge.pruning.pruner import READ_OPTIMIZED, SNAPSHOT, plan_slices
from hive_bridge.stats.contract import stat_name
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.mdt_rows import partition_rows
from hive_bridge.table.table import HudiTable
from sarg import hiveql
from tests.conftest import FIXTURE_NAMES
from tests.hive_bridge.pruning.test_key_index import _groups_of_rows

#: the real tables whose metadata table has a usable partition_stats partition (the LANCE one's are not used)
WITH_PARTITION_STATS = [n for n in ("quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
                                    "sample_table.cow.v9_timebasedkeygen_epochmillis",
                                    "sample_table.cow.v9_timebasedkeygen_nonhivestyle",
                                    "sample_table.cow.v9_txns_simple_meta",
                                    "sample_table.mor.avro.v9_txns_simple_meta",
                                    "sample_table.cow.v9_txns_simple_overwrite",
                                    "sample_table.mor.avro.v9_txns_simple_overwrite") if n in FIXTURE_NAMES]

_COMPARABLE = (pa.types.is_integer, pa.types.is_string, pa.types.is_decimal, pa.types.is_date32)


def _literal(v: Any) -> str:
    if isinstance(v, str | dt.date):
        return f"'{v}'"
    return str(v)


def _cmp(op: str, a: Any, b: Any) -> bool | None:
    if a is None:
        return None
    return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _and(a: bool | None, b: bool | None) -> bool | None:
    return False if a is False or b is False else (None if a is None or b is None else True)


def _or(a: bool | None, b: bool | None) -> bool | None:
    return True if a is True or b is True else (None if a is None or b is None else False)


def _not(a: bool | None) -> bool | None:
    return None if a is None else not a


def _rows(root: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(fid, r) for fid, t in _groups_of_rows(root).items() for r in t.to_pylist()]


def _columns(table: HudiTable, rows: list[tuple[str, dict[str, Any]]]) -> dict[str, list[Any]]:
    """Data columns of a type the filters compare, with the values the rows hold."""
    schema = table.arrow_schema()
    out: dict[str, list[Any]] = {}
    for f in schema:
        if f.name.startswith("_hoodie") or not any(is_type(f.type) for is_type in _COMPARABLE):
            continue
        values = sorted({r.get(f.name) for _, r in rows if r.get(f.name) is not None}, key=str)
        if values and not isinstance(values[0], float):
            out[f.name] = values
    return out


def _kept(table: HudiTable, text: str, source: str, partition_stats: bool, query_type: str = SNAPSHOT,
          explain: bool = False) -> Any:
    filt = hiveql.parse_hiveql(text, table_sarg_schema(table))
    index = ColumnStatsIndex(table, persist=False, source=source)
    return plan_slices(table, index, table.latest_file_slices(), filt, explain=explain,
                        query_type=query_type, partition_stats=partition_stats), index


@pytest.mark.parametrize("name", WITH_PARTITION_STATS)
def test_partition_statistics_lose_no_row_and_keep_what_the_files_statistics_keep(
        shared_tables: dict[str, Path], name: str) -> None:
    root = shared_tables[name]
    table = HudiTable.open(root)
    assert partition_stats_problem(table) is None, partition_stats_problem(table)
    rows = _rows(root)
    columns = _columns(table, rows)
    assert columns
    pools = {c: [*vs[:6], *vs[-3:]] for c, vs in columns.items()}

    def leaf() -> st.SearchStrategy[tuple[str, Any]]:
        def make(c: str) -> st.SearchStrategy[tuple[str, Any]]:
            return st.tuples(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), st.sampled_from(pools[c])).map(
                lambda p, c=c: (f"`{c}` {p[0]} {_literal(p[1])}", lambda r, c=c, p=p: _cmp(p[0], r.get(c), p[1])))
        return st.sampled_from(sorted(pools)).flatmap(make)

    shapes = st.recursive(leaf(), lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: (f"({p[0][0]} AND {p[1][0]})",
                                               lambda r, p=p: _and(p[0][1](r), p[1][1](r)))),
        st.tuples(inner, inner).map(lambda p: (f"({p[0][0]} OR {p[1][0]})",
                                               lambda r, p=p: _or(p[0][1](r), p[1][1](r)))),
        inner.map(lambda p: (f"NOT {p[0]}", lambda r, p=p: _not(p[1](r))))), max_leaves=3)
    dropped_somewhere = []

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(shapes, st.sampled_from([SNAPSHOT, READ_OPTIMIZED]))
    def check(shape: tuple[str, Any], query_type: str) -> None:
        text, truth = shape
        with_ps, _ = _kept(table, text, "auto", True, query_type)
        by_files, _ = _kept(table, text, "footers", False, query_type)
        kept = {s.file_id for s in with_ps.slices}
        if query_type == SNAPSHOT:
            want = {fid for fid, r in rows if truth(r) is True}
            assert want <= kept, (name, text, want - kept)
        # the partitions dropped are partitions whose every slice the files' own statistics drop
        assert {s.file_id for s in by_files.slices} <= kept, (name, text)
        assert with_ps.files_total == by_files.files_total
        assert with_ps.files_kept + with_ps.dropped_by_partition + with_ps.dropped_by_partition_stats + \
            with_ps.dropped_by_statistics == with_ps.files_total
        dropped_somewhere.append(with_ps.dropped_by_partition_stats)

    check()
    if table.properties.partition_fields:
        assert any(dropped_somewhere), name


def test_excluded_partitions_are_never_looked_up(shared_tables: dict[str, Path]) -> None:
    """A filter on a column no partition but one can match: the other partitions' slices are dropped by the
    partition statistics, and only the remaining partition's files have statistics read (counters)."""
    name = "sample_table.cow.v9_txns_simple_meta"
    if name not in FIXTURE_NAMES:
        pytest.skip("fixture missing")
    table = HudiTable.open(shared_tables[name])
    slices = table.latest_file_slices()
    by_partition: dict[str, int] = {}
    for s in slices:
        by_partition[s.partition_path] = by_partition.get(s.partition_path, 0) + 1
    # currency EUR/GBP only in region=eu (see the partition statistics)
    result, index = _kept(table, "currency = 'GBP'", "mdt", True, explain=True)
    assert result.dropped_by_partition_stats == len(slices) - by_partition["region=eu"]
    assert result.partitions_dropped_by_stats == len(by_partition) - 1
    looked_up = index.last.files_from_mdt + index.last.files_from_footers + index.last.files_without_mdt_entry
    assert looked_up == by_partition["region=eu"], index.last
    stages = {v.partition: v.stage for v in result.verdicts if not v.kept}
    assert stages and all(stage == "partition statistics" for p, stage in stages.items() if p != "region=eu")
    assert all("partition statistics" in v.reason for v in result.verdicts if v.stage == "partition statistics")
    # without partition statistics every file is looked up, and the same slices are kept
    plain, plain_index = _kept(table, "currency = 'GBP'", "mdt", False)
    assert plain_index.last.files_from_mdt + plain_index.last.files_without_mdt_entry == len(slices)
    assert [s.file_id for s in plain.slices] == [s.file_id for s in result.slices]


def test_partitions_with_log_files_are_unknown_for_snapshot_queries(shared_tables: dict[str, Path]) -> None:
    """Whether a partition's record covers its log files depends on the Hudi version: a snapshot query does not
    judge a partition with log files by it; a read-optimized query (base files only) does."""
    name = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
    if name not in FIXTURE_NAMES:
        pytest.skip("fixture missing")
    table = HudiTable.open(shared_tables[name])
    with_logs = {s.partition_path for s in table.latest_file_slices() if s.log_files}
    assert with_logs
    text = "rider = 'no such rider'"
    snap, _ = _kept(table, text, "auto", True, SNAPSHOT, explain=True)
    ro, _ = _kept(table, text, "auto", True, READ_OPTIMIZED, explain=True)
    assert not any(v.stage == "partition statistics" for v in snap.verdicts if v.partition in with_logs)
    assert any(v.stage == "partition statistics" for v in ro.verdicts if v.partition in with_logs)


def test_a_lagging_metadata_table_is_not_trusted(shared_tables: dict[str, Path], tmp_path: Path) -> None:
    """The metadata table misses the data table's last instant: its partition statistics may not cover that
    instant's files, so no partition is dropped by them."""
    name = "sample_table.cow.v9_txns_simple_meta"
    if name not in FIXTURE_NAMES:
        pytest.skip("fixture missing")
    root = tmp_path / name
    shutil.copytree(shared_tables[name], root)
    text = "currency = 'GBP'"
    fresh, _ = _kept(HudiTable.open(root), text, "auto", True)
    assert fresh.dropped_by_partition_stats > 0
    mdt_timeline = root / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    last_write = HudiTable.open(root).timeline.completed_writes[-1].timestamp
    mirror, = (p for p in mdt_timeline.iterdir() if p.name.startswith(f"{last_write}_"))
    shutil.move(str(mirror), str(tmp_path / "moved-away"))
    table = HudiTable.open(root)
    assert "lags" in (partition_stats_problem(table) or "")
    stale, _ = _kept(table, text, "auto", True)
    assert stale.dropped_by_partition_stats == 0 and "lags" in stale.partition_stats_note
    assert {s.file_id for s in fresh.slices} <= {s.file_id for s in stale.slices}


def _entry(partition: str, column: str, lo: Any, hi: Any, nulls: int | None, values: int = 10,
           vtype: str | None = None) -> ColumnStatsEntry:
    return ColumnStatsEntry(partition=partition, file_name=None, column=column, min=lo, max=hi, null_count=nulls,
                            value_count=values, total_size=None, is_deleted=False, is_tight_bound=False,
                            value_type=vtype)


def test_partition_rows_keep_unknown_what_an_aggregate_cannot_prove() -> None:
    entries = [_entry("p=1", "n", 1, 5, 0), _entry("p=1", "s", "a", "c", 0), _entry("p=1", "f", 1.0, 2.0, 0),
               _entry("p=2", "n", 7, 9, 3), _entry("p=2", "s", "x", "y", 2), _entry("p=2", "d", Decimal("1.5"),
                                                                                   Decimal("2.5"), 0)]
    leaves = [("n", pa.int64()), ("s", pa.string()), ("f", pa.float64()), ("d", pa.decimal128(10, 2))]
    rows = partition_rows(entries, ["p=1", "p=2", "p=3"], leaves).to_pydict()
    assert rows["partition"] == ["p=1", "p=2", "p=3"] and rows["num_rows"] == [None] * 3
    assert rows[stat_name("n", "min")] == [1, 7, None] and rows[stat_name("n", "max")] == [5, 9, None]
    # null counts are never taken from an aggregate; string bounds only where it counts no null
    assert rows[stat_name("n", "null_count")] == [None] * 3
    assert rows[stat_name("s", "min")] == ["a", None, None]
    # float bounds are never used; a partition or column without an entry is unknown
    assert rows[stat_name("f", "min")] == [None] * 3
    assert rows[stat_name("d", "min")] == [None, Decimal("1.5"), None]
    # a column counting fewer values than the partition's others left files out (indexed or added later)
    late = partition_rows([*entries, _entry("p=1", "late", 3, 4, 0, values=4)], ["p=1"],
                          [("n", pa.int64()), ("late", pa.int64())]).to_pydict()
    assert late[stat_name("n", "min")] == [1] and late[stat_name("late", "min")] == [None]


def test_spark_reads_the_same_rows_with_partitions_dropped_by_their_statistics(
        spark: Any, shared_tables: dict[str, Path]) -> None:
    """Spark's rows of the table read pruned (partitions dropped by their statistics) and unpruned are the same."""
    from hive_bridge.spark import read_hudi
    from tests.hive_bridge.spark.test_spark_read import _rows_equal

    name = "sample_table.cow.v9_txns_simple_meta"
    if name not in FIXTURE_NAMES:
        pytest.skip("fixture missing")
    root = str(shared_tables[name])
    text = "currency = 'GBP' OR amount > 8000"     # region=us holds neither (its partition statistics say so)
    pruned = read_hudi(spark, root, text)
    full = read_hudi(spark, root, text, prune=False)
    assert pruned.listing.dropped_by_partition_stats > 0
    assert _rows_equal(pruned.df, full.df) == (0, 0)
    assert full.df.count() > 0
