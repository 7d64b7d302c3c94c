"""No lost rows on merge-on-read tables: a slice whose merged rows hold a match is never dropped.

Random merge-on-read tables written with the test writer (table versions 6 and 8, partitioned or not, several
file groups), then random operations: upserts that give existing keys freshly drawn values (NaN, -0.0, nulls,
values far outside the base files' ranges) in Avro or parquet log blocks, inserts into log-only file groups,
deletes, a write left inflight (an uncommitted log), rollbacks, compactions. For random SearchArguments over the
data columns (sometimes the record key and the partition column too), in both query types, every latest slice
is read: merged by hudi-rs's file-group reader for a snapshot query, its base file alone (pyarrow) for a
read-optimized one. Whenever one of those rows can make the filter TRUE (rowmodel's Spark semantics, under
every reading of mixed types), the pruner must keep the slice. Once per example, hudi-rs's merged rows of all
slices must equal the writer's own merge (the oracle agrees with the model of the table).

Kinds: every rowmodel kind but ``ts`` (naive nanosecond timestamps: Avro log blocks hold at most microseconds,
the writer refuses to narrow them, and hudi-rs panics on naive timestamps). ``i8`` goes through Avro ``int`` in
the logs (hudi-rs returns the merged column as int32), ``c`` is a string column declared ``char(4)``.

The deterministic tests below pin the cases the property test must see: an update that moves every value of a
slice out of its base file's range lets the merged slice be dropped; one that moves a value *into* the filter's
range keeps the slice although its base file alone would be dropped; a log-only group is absent from a
read-optimized query, and a base file whose only matching row was updated away in a log is still read there.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.pruning import ListStatusResult, Pruner
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter, WriteResult
from sarg import Type
from tests.hive_bridge.rowmodel import KINDS, ColumnKind, arrow_column, modes, random_sarg, row_truth

KEY, PART, ORD = "id", "part", "ord"  # ORD: the ordering (precombine) field, one value per write
#: rowmodel kinds that round-trip through the writer (base files, Avro and parquet log blocks) and hudi-rs
MOR_KINDS = sorted(k for k in KINDS if k != "ts")
PARTITIONS = ["a", "b", "é"]
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]
#: the record key, the partition column and the ordering field as rowmodel kinds (filters on them are judged
#: like data columns)
KEY_KIND = ColumnKind(KEY, pa.int64(), st.integers(0, 60), {Type.LONG: st.integers(-2, 62)}, "bigint")
ORD_KIND = ColumnKind(ORD, pa.int64(), st.integers(0, 7), {Type.LONG: st.integers(-1, 8)}, "bigint")
PART_KIND = ColumnKind(PART, pa.string(), st.sampled_from(PARTITIONS),
                       {Type.STRING: st.sampled_from([*PARTITIONS, "", "c", "é "])}, "string")
ALL_KINDS: dict[str, ColumnKind] = {**KINDS, KEY: KEY_KIND, PART: PART_KIND, ORD: ORD_KIND}

#: across the run: slices judged, merged slices (base + logs, or log-only) dropped, ... (see the report)
COUNTS: Counter[str] = Counter()


def _examples(base: int) -> int:
    """``base`` examples under the default profile (200), scaled by the square root of the profile's factor
    (each example writes a table and reads every slice with hudi-rs)."""
    factor = settings().max_examples / 200
    return max(1, round(base * math.sqrt(factor))) if factor > 1 else max(1, round(base * factor))


def _sarg(columns: Sequence[str]) -> st.SearchStrategy[sarg.SearchArgument]:
    """Random filters over any of ALL_KINDS (the key, partition and ordering columns included)."""
    return random_sarg(columns, kinds=ALL_KINDS)


# -- random tables and operations --------------------------------------------------------------------------

Row = dict[str, Any]


class Case:
    """A drawn example: the table layout, its initial rows and the operations, all values drawn up front."""

    def __init__(self, version: int, parts: list[str], columns: list[str], rows_per_file: int, first: list[Row],
                 ops: list[tuple[Any, ...]], filters: list[sarg.SearchArgument], tz: str) -> None:
        self.version, self.parts, self.columns = version, parts, columns
        self.rows_per_file, self.first, self.ops = rows_per_file, first, ops
        self.filters, self.tz = filters, tz

    def __repr__(self) -> str:  # what hypothesis prints for a failing example: the whole reproduction
        lines = [f"version={self.version} partitions={self.parts} columns={self.columns} "
                 f"rows_per_file={self.rows_per_file} tz={self.tz}", f"insert (ordering value 1) {self.first}"]
        for step, op in enumerate(self.ops, start=2):
            ordering = f" (ordering value {0 if op[0] == 'update' and op[4] else step})" \
                if op[0] in ("update", "inflight", "log_insert") else ""
            lines.append(f"{op[0]}{ordering} {op[1:]}")
        lines += [f"filter {s}" for s in self.filters]
        return "\n  ".join(["Case:", *lines])


def _part_of(parts: list[str], key: int) -> str | None:
    return parts[key % len(parts)] if parts else None


@st.composite
def _case(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Case:
    version = draw(st.sampled_from([6, 8]))
    parts = PARTITIONS[:draw(st.sampled_from([0, 2, 3]))]
    columns = draw(st.lists(st.sampled_from(MOR_KINDS), min_size=1, max_size=3, unique=True))
    cells = {c: KINDS[c].values | st.none() if draw(st.booleans()) else KINDS[c].values for c in columns}

    def rows(keys: Sequence[int]) -> list[Row]:
        """Rows of one write. A column's values are drawn freely, or from a palette of 1-3 values drawn for the
        write: base files then have narrow ranges that later updates often leave (or enter)."""
        values: dict[str, st.SearchStrategy[Any]] = {}
        for c in columns:
            values[c] = st.sampled_from(draw(st.lists(cells[c], min_size=1, max_size=3))) \
                if draw(st.booleans()) else cells[c]
        out = []
        for k in keys:
            row: Row = {KEY: k, **{c: draw(values[c]) for c in columns}}
            if parts:
                row[PART] = _part_of(parts, k)
            out.append(row)
        return out

    n = draw(st.integers(1, 30))
    first = rows(range(n))
    next_key = n
    ops: list[tuple[Any, ...]] = []
    fmt = st.sampled_from(["avro", "parquet"])
    for _ in range(draw(st.integers(1, 5))):
        what = draw(st.sampled_from(["update", "update", "log_insert", "delete", "inflight", "rollback",
                                     "compact"]))
        if what in ("update", "inflight"):
            # existing keys (some perhaps deleted or rolled back: then inserted again) with fresh values, and
            # sometimes new keys: new file groups, base files or log-only
            keys = draw(st.lists(st.integers(0, next_key - 1), min_size=1, max_size=8, unique=True))
            new = draw(st.integers(0, 2))
            keys += range(next_key, next_key + new)
            next_key += new
            # a late write (ordering value below the insert's) loses to the records it updates (event time); not
            # after a delete: the writer's model then lets the late record win over the deleted key's base record,
            # Hudi (and hudi-rs) bring the base record back
            late = what == "update" and not any(o[0] == "delete" for o in ops) and draw(st.integers(0, 4)) == 0
            ops.append((what, rows(keys), draw(fmt), draw(st.booleans()), late))
        elif what == "log_insert":
            new = draw(st.integers(1, 6))
            ops.append((what, rows(range(next_key, next_key + new)), draw(fmt), draw(st.integers(1, 4))))
            next_key += new
        elif what == "delete":
            ops.append((what, draw(st.lists(st.integers(0, next_key - 1), min_size=1, max_size=6, unique=True))))
        else:
            ops.append((what,))
    filter_columns = list(columns)
    if draw(st.integers(0, 3)) == 0:
        filter_columns.append(KEY)
    if parts and draw(st.integers(0, 2)) == 0:
        filter_columns.append(PART)
    if draw(st.integers(0, 5)) == 0:
        filter_columns.append(ORD)
    filters = draw(st.lists(_sarg(filter_columns), min_size=1, max_size=4))
    return Case(version, parts, columns, draw(st.integers(1, 10)), first, ops, filters, draw(st.sampled_from(ZONES)))


def _arrow(case: Case, rows: list[Row], ordering: int) -> pa.Table:
    data: dict[str, pa.Array] = {KEY: pa.array([r[KEY] for r in rows], pa.int64())}
    if case.parts:
        data[PART] = pa.array([r[PART] for r in rows], pa.string())
    data[ORD] = pa.array([ordering] * len(rows), pa.int64())
    for c in case.columns:
        data[c] = arrow_column(KINDS[c], [r[c] for r in rows])
    return pa.table(data)


def _keys(case: Case, keys: list[int]) -> pa.Table:
    data: dict[str, pa.Array] = {KEY: pa.array(keys, pa.int64())}
    if case.parts:
        data[PART] = pa.array([_part_of(case.parts, k) for k in keys], pa.string())
    return pa.table(data)


def _build(root: Path, case: Case) -> HudiWriter:
    """The table: the insert, then the operations. A write left inflight is rolled back before the next write
    (Hudi's eager cleaning), or stays pending when it is the last operation; a rollback undoes that pending
    write, else the latest completed deltacommit since the last compaction."""
    w = HudiWriter(root, version=case.version, table_type="MERGE_ON_READ",
                   partition_fields=(PART,) if case.parts else (), precombine_field=ORD,
                   rows_per_file=case.rows_per_file)
    w.insert(_arrow(case, case.first, 1))
    undo: list[str] = []
    pending: WriteResult | None = None
    for step, op in enumerate(case.ops, start=2):  # the ordering value grows with every write but late ones
        what = op[0]
        if pending is not None:
            w.rollback(pending)
            pending = None
            event("an inflight write rolled back")
            if what == "rollback":
                continue
        event(f"operation: {what}")
        r: WriteResult | None = None
        if what == "update":
            r = w.upsert(_arrow(case, op[1], 0 if op[4] else step), block_format=op[2], inserts_to_logs=op[3])
        elif what == "inflight":
            pending = w.upsert(_arrow(case, op[1], step), block_format=op[2], inserts_to_logs=op[3],
                               inflight=True)
        elif what == "log_insert":
            r = w.upsert(_arrow(case, op[1], step), block_format=op[2], inserts_to_logs=True, rows_per_file=op[3])
        elif what == "delete":
            r = w.delete(_keys(case, op[1]))
        elif what == "rollback" and undo:
            w.rollback(undo.pop())
        elif what == "compact":
            w.compact()
            undo.clear()
        if r is not None:
            assert r.completed
            undo.append(r.instant)
    if pending is not None:
        event("an inflight write left pending")
    return w


# -- rows in rowmodel's raw form ------------------------------------------------------------------------------

def _raw(kind: ColumnKind, column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A column's values as rowmodel holds them: timestamps as ints in the column's unit, dates as day numbers."""
    typ = kind.arrow_type
    col = column.cast(typ)
    if pa.types.is_timestamp(typ):
        col = col.cast(pa.int64())
    elif pa.types.is_date32(typ):
        col = col.cast(pa.int32())
    return col.to_pylist()  # type: ignore[no-any-return]


def _rows(table: pa.Table | None, names: list[str]) -> list[Row]:
    if table is None or table.num_rows == 0:
        return []
    cols = {n: _raw(ALL_KINDS[n], table.column(n)) for n in names}
    return [{n: cols[n][i] for n in names} for i in range(table.num_rows)]


def _comparable(rows: list[Row]) -> list[list[tuple[str, Any]]]:
    """Rows sorted by key, floats by their bits (NaN equal to NaN, -0.0 not 0.0)."""
    def cell(v: Any) -> Any:
        return ("float", v.hex()) if isinstance(v, float) else v
    return sorted(([(k, cell(v)) for k, v in sorted(r.items())] for r in rows), key=lambda r: dict(r)[KEY])


def _slice_key(s: FileSlice) -> tuple[str, str]:
    return s.partition_path, s.file_id


def _slice_rows(root: Path, slices: list[FileSlice], names: list[str]) -> tuple[dict[tuple[str, str], list[Row]],
                                                                                  dict[tuple[str, str], list[Row]]]:
    """Per slice: its merged rows (hudi-rs's file-group reader) and its base file's rows (pyarrow)."""
    from hudi import HudiTableBuilder

    reader = HudiTableBuilder.from_base_uri(str(root)).build().create_file_group_reader_with_options()
    merged: dict[tuple[str, str], list[Row]] = {}
    base: dict[tuple[str, str], list[Row]] = {}
    for s in slices:
        got = reader.read_file_slice_from_paths(s.base_file.path if s.base_file is not None else "",
                                                [lf.path for lf in s.log_files])
        batches = got if isinstance(got, list) else [got]
        merged[_slice_key(s)] = _rows(pa.Table.from_batches(batches) if batches else None, names)
        if s.base_file is not None:
            base[_slice_key(s)] = _rows(pq.read_table(s.base_file.full_path), names)
    return merged, base


def _can_be_true(s: sarg.SearchArgument, rows: list[Row], tz: str) -> Row | None:
    """A row that can make the filter TRUE under some reading (as test_no_lost_rows' `_outcomes`), or None."""
    for row in rows:
        for mode in modes(tz):
            if row_truth(s, ALL_KINDS, row, mode).value[0]:
                return row
    return None


def _check_kept(listing: ListStatusResult, slices: list[FileSlice], rows: dict[tuple[str, str], list[Row]],
                s: sarg.SearchArgument, tz: str, context: str) -> None:
    kept = {_slice_key(x) for x in listing.slices}
    for x in slices:
        key = _slice_key(x)
        match = _can_be_true(s, rows.get(key, []), tz)
        if match is not None:
            assert key in kept, (f"{listing.query_type}: slice {key} (base {x.base_file and x.base_file.path}, "
                                 f"logs {[lf.path for lf in x.log_files]}) dropped, yet its row {match} matches "
                                 f"filter {s}{context}")


_SETTINGS = settings(max_examples=_examples(200), derandomize=True, database=None, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                     phases=[Phase.explicit, Phase.generate, Phase.shrink])


@_SETTINGS
@given(_case())
def test_no_merged_slice_with_a_matching_row_is_dropped(case: Case) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "t"
        w = _build(root, case)
        names = [KEY, *([PART] if case.parts else []), ORD, *case.columns]
        table = HudiTable.open(root)
        slices = table.latest_file_slices()
        merged, base = _slice_rows(root, slices, names)

        # the oracle agrees with the writer's own merge: hudi-rs's merged rows of all slices are the table's rows
        model = _rows(w.merged_rows(), names)
        assert _comparable([r for rs in merged.values() for r in rs]) == _comparable(model), case

        schema = {KEY: "bigint", ORD: "bigint", **({PART: "string"} if case.parts else {}),
                  **{c: KINDS[c].hive_type for c in case.columns}}
        index = ColumnStatsIndex(table, persist=False)
        snapshot = Pruner(table, index, slices, query_type="snapshot")
        ro = Pruner(table, index, slices, query_type="read_optimized")
        ro_slices = [x for x in slices if x.base_file is not None]
        is_merged = {_slice_key(x) for x in slices if x.log_files}
        event(f"merged slices in the table: {min(len(is_merged), 3)}{'+' if len(is_merged) >= 3 else ''}")
        for s in case.filters:
            context = f"\n{case}"
            listing = snapshot.run(s, schema=schema, session_time_zone=case.tz)
            _check_kept(listing, slices, merged, s, case.tz, context)
            kept = {_slice_key(x) for x in listing.slices}
            explained = snapshot.run(s, schema=schema, session_time_zone=case.tz, explain=True)  # explain judges the parts alone too
            assert {_slice_key(x) for x in explained.slices} == kept
            assert [v.kept for v in explained.verdicts] == [_slice_key(x) in kept for x in slices]
            dropped_merged = len(is_merged - kept)
            COUNTS["snapshot slices judged"] += len(slices)
            COUNTS["snapshot merged slices judged"] += len(is_merged)
            COUNTS["snapshot merged slices dropped"] += dropped_merged
            COUNTS["snapshot slices dropped"] += len(slices) - len(kept)
            if dropped_merged:
                event("snapshot: a merged slice dropped")

            listing = ro.run(s, schema=schema, session_time_zone=case.tz)
            _check_kept(listing, ro_slices, base, s, case.tz, context)
            assert all(x.base_file is not None and not x.log_files for x in listing.slices)
            COUNTS["read-optimized slices judged"] += len(ro_slices)
            COUNTS["read-optimized slices dropped"] += len(ro_slices) - len(listing.slices)
        COUNTS["examples"] += 1


def teardown_module() -> None:
    if COUNTS["examples"]:
        print("\nno lost rows (merge-on-read):", dict(sorted(COUNTS.items())))


# -- deterministic cases -------------------------------------------------------------------------------------

def _table(root: Path, version: int, rows: dict[int, int], rows_per_file: int = 2) -> HudiWriter:
    """A merge-on-read table of (id -> i) rows, `rows_per_file` keys per file group in key order."""
    w = HudiWriter(root, version=version, table_type="MERGE_ON_READ", precombine_field=ORD,
                   rows_per_file=rows_per_file)
    w.insert(_ints(rows, 1))
    return w


def _ints(rows: dict[int, int], ordering: int) -> pa.Table:
    return pa.table({KEY: pa.array(list(rows), pa.int64()), ORD: pa.array([ordering] * len(rows), pa.int64()),
                     "i": pa.array(list(rows.values()), pa.int64())})


def _run(root: Path, text: str, query_type: str) -> tuple[ListStatusResult, dict[str, FileSlice]]:
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    pruner = Pruner(table, ColumnStatsIndex(table, persist=False), slices, query_type=query_type)
    listing = pruner.run(sarg.parse(text, {"i": "bigint", KEY: "bigint"}), explain=True)
    return listing, {x.file_id: x for x in slices}


def _group_of(root: Path, key: int) -> str:
    """The file id of the group whose base file holds `key`."""
    for x in HudiTable.open(root).latest_file_slices():
        if x.base_file is not None and key in pq.read_table(x.base_file.full_path).column(KEY).to_pylist():
            return x.file_id
    raise AssertionError(f"no base file holds {key}")


def _kept_ids(listing: ListStatusResult) -> set[str]:
    return {x.file_id for x in listing.slices}


VERSIONS_FORMATS = [pytest.param(v, f, id=f"v{v}-{f}") for v in (6, 8) for f in ("avro", "parquet")]


@pytest.mark.parametrize(("version", "block_format"), VERSIONS_FORMATS)
def test_updates_move_values_out_of_and_into_the_base_range(tmp_path: Path, version: int, block_format: str) -> None:
    """Group A's base file holds i = 10, 11 and group B's i = 12, 13; then both rows of A are updated to 100
    and 101 (in a log). The merged slice A is judged by the union of its base file's and its log's ranges:
    [10, 101]. Dropped for a filter below that range; kept for ``i = 100`` although its base file alone would
    be dropped (a read-optimized query drops it: its rows are the base file's)."""
    root = tmp_path / "t"
    w = _table(root, version, {0: 10, 1: 11, 2: 12, 3: 13})
    a, b = _group_of(root, 0), _group_of(root, 2)
    assert a != b
    w.upsert(_ints({0: 100, 1: 101}, 2), block_format=block_format)

    # every value moved out of A's base range, none into the filter's: the merged slice A is dropped
    listing, slices = _run(root, "leaf-(LESS_THAN i 5)", "snapshot")
    assert slices[a].log_files and not slices[b].log_files
    assert _kept_ids(listing) == set() and listing.dropped_by_statistics == 2
    listing, _ = _run(root, "(not leaf-(LESS_THAN_EQUALS i 150))", "snapshot")
    assert _kept_ids(listing) == set()

    # a value moved into the filter's range: kept by its log, its base file alone would be dropped
    listing, _ = _run(root, "leaf-(EQUALS i 100)", "snapshot")
    assert _kept_ids(listing) == {a}
    (verdict,) = [v for v in listing.verdicts if v.kept]
    assert [p[1].endswith("(no match)") for p in verdict.parts] == [True, False], verdict
    assert verdict.parts[0][0].startswith("base ") and verdict.parts[1][0].startswith("log ")
    ro, _ = _run(root, "leaf-(EQUALS i 100)", "read_optimized")
    assert _kept_ids(ro) == set()

    # after the delete of key 0 the slice's rows are {1: 101}: still kept for 101 (the union only loosens)
    w.delete(_keys_table([0]))
    listing, _ = _run(root, "leaf-(EQUALS i 101)", "snapshot")
    assert _kept_ids(listing) == {a}
    # the compaction writes the merged rows as A's new base file: [101, 101], no logs
    w.compact()
    listing, slices = _run(root, "leaf-(EQUALS i 100)", "snapshot")
    assert not slices[a].log_files and _kept_ids(listing) == set()
    listing, _ = _run(root, "leaf-(EQUALS i 101)", "snapshot")
    assert _kept_ids(listing) == {a}


def _keys_table(keys: list[int]) -> pa.Table:
    return pa.table({KEY: pa.array(keys, pa.int64())})


@pytest.mark.parametrize(("version", "block_format"), VERSIONS_FORMATS)
def test_log_only_groups_and_read_optimized_queries(tmp_path: Path, version: int, block_format: str) -> None:
    """A log-only file group (new keys written to logs) is judged by its logs in a snapshot query and absent
    from a read-optimized one. A base file whose only matching row was updated away in a log is kept by a
    read-optimized query (it reads that base file, row and all) and by a snapshot query (the union of the
    parts' ranges still covers the old value)."""
    root = tmp_path / "t"
    w = _table(root, version, {0: 10, 1: 11, 2: 12, 3: 13})
    a, b = _group_of(root, 0), _group_of(root, 2)
    w.upsert(_ints({7: 500, 8: 501}, 2), block_format=block_format, inserts_to_logs=True)
    w.upsert(_ints({2: 200}, 3), block_format=block_format)  # B's only row with i = 12 now holds 200
    slices = HudiTable.open(root).latest_file_slices()
    (log_only,) = [x.file_id for x in slices if x.base_file is None]
    assert {x.file_id for x in slices} == {a, b, log_only}

    listing, _ = _run(root, "leaf-(EQUALS i 500)", "snapshot")
    assert _kept_ids(listing) == {log_only}
    listing, _ = _run(root, "leaf-(LESS_THAN i 100)", "snapshot")
    assert log_only not in _kept_ids(listing) and a in _kept_ids(listing)
    ro, _ = _run(root, "leaf-(EQUALS i 500)", "read_optimized")
    assert _kept_ids(ro) == set() and ro.files_total == 2
    ro, _ = _run(root, "(not leaf-(IS_NULL i))", "read_optimized")
    assert _kept_ids(ro) == {a, b} and all(not x.log_files for x in ro.slices)
    assert all(log_only not in v.path for v in ro.verdicts)

    # i = 12: gone from the merged rows, still in B's base file, which is what a read-optimized query reads
    ro, _ = _run(root, "leaf-(EQUALS i 12)", "read_optimized")
    assert _kept_ids(ro) == {b}
    (kept,) = ro.slices
    assert kept.base_file is not None and 12 in pq.read_table(kept.base_file.full_path).column("i").to_pylist()
    listing, _ = _run(root, "leaf-(EQUALS i 12)", "snapshot")
    assert _kept_ids(listing) == {b}  # [12, 200]: the union does not know 12 was updated away
    # and the updated value is seen in a snapshot query only
    assert _kept_ids(_run(root, "leaf-(EQUALS i 200)", "snapshot")[0]) == {b}
    assert _kept_ids(_run(root, "leaf-(EQUALS i 200)", "read_optimized")[0]) == set()
