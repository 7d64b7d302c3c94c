"""Hudi's record index, secondary index and bloom filters on tables keyed on two fields (complex key generator:
``a:<a>,b:<b>`` keys, ``__null__`` / ``__empty__`` for null and empty values), written by the test writer with
random contents: every key of every file group looked up by equality on both fields keeps exactly the group
holding it, every secondary value exactly the groups holding it, and random filters lose no row (truth: the rows
hudi-rs reads from the latest slices, judged with SQL's three-valued logic)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning import Pruner
from hive_bridge.pruning.key_index import KeyIndexes
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import write_metadata_table
from hive_bridge.testing.writer import HudiWriter
from sarg import hiveql
from tests.conftest import FIXTURE_NAMES, SHARED_TABLES
from tests.hive_bridge.pruning.test_key_index import _groups_of_rows

#: key field values: empty, with the key's own separators, with the secondary index's separator
A_VALUES = ["", "x", "y,z", "a:b", "k$1", "m"]
C_VALUES = ["u", "v", "w$", None]
FIELDS = ["a", "b"]


def _quote(v: Any) -> str:
    return "'" + v.replace("'", "''") + "'" if isinstance(v, str) else str(v)


def _write(root: Path, first: list[tuple[str, int | None, str | None, str]],
           second: list[tuple[str, int | None, str | None, str]], mdt: bool) -> None:
    def table(rows: list[tuple[str, int | None, str | None, str]]) -> pa.Table:
        return pa.table({"a": pa.array([r[0] for r in rows], pa.string()), "b": pa.array([r[1] for r in rows],
                                                                                          pa.int64()),
                         "c": pa.array([r[2] for r in rows], pa.string()), "part": [r[3] for r in rows]})

    w = HudiWriter(root, version=8, partition_fields=["part"], record_key_fields=FIELDS, rows_per_file=3,
                   bloom_filters=True)
    w.upsert(table(first))          # upserts only: every write keeps keys unique (the record index is trusted)
    if second:
        w.upsert(table(second))
    if mdt:
        write_metadata_table(root, secondary_indexes={"c_idx": "c"})


def _row() -> st.SearchStrategy[tuple[str, int | None, str | None, str]]:
    return st.tuples(st.sampled_from(A_VALUES), st.one_of(st.none(), st.integers(0, 4)), st.sampled_from(C_VALUES),
                     st.sampled_from(["p0", "p1"])).filter(lambda r: r[0] != "" or r[1] is not None)


def _unique(rows: list[tuple[str, int | None, str | None, str]]) -> list[tuple[str, int | None, str | None, str]]:
    seen: dict[tuple[str, int | None], tuple[str, int | None, str | None, str]] = {}
    for r in rows:
        seen.setdefault((r[0], r[1]), r)
    return list(seen.values())


def _leaf(column: str, values: list[Any]) -> st.SearchStrategy[tuple[str, Any]]:
    pool = st.sampled_from(values)

    def eq(v: Any) -> tuple[str, Any]:
        return f"`{column}` = {_quote(v)}", lambda r: None if r[column] is None else r[column] == v

    def ne(v: Any) -> tuple[str, Any]:
        return f"`{column}` <> {_quote(v)}", lambda r: None if r[column] is None else r[column] != v

    def isin(vs: list[Any]) -> tuple[str, Any]:
        return (f"`{column}` IN ({', '.join(_quote(v) for v in vs)})",
                lambda r: None if r[column] is None else r[column] in vs)

    return st.one_of(pool.map(eq), pool.map(ne), st.lists(pool, min_size=1, max_size=3).map(isin))


def _and(x: Any, y: Any) -> Any:
    return False if x is False or y is False else (None if x is None or y is None else True)


def _or(x: Any, y: Any) -> Any:
    return True if x is True or y is True else (None if x is None or y is None else False)


def _filters() -> st.SearchStrategy[tuple[str, Any]]:
    leaves = st.one_of(_leaf("a", [*A_VALUES, "no such"]), _leaf("b", [0, 1, 2, 3, 4, 99]),
                       _leaf("c", [*(v for v in C_VALUES if v is not None), "no such"]))
    conj = st.tuples(_leaf("a", A_VALUES), _leaf("b", [0, 1, 2, 3, 4])).map(
        lambda p: (f"({p[0][0]} AND {p[1][0]})", lambda r, p=p: _and(p[0][1](r), p[1][1](r))))
    base = st.one_of(leaves, conj)
    return st.recursive(base, lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: (f"({p[0][0]} AND {p[1][0]})",
                                               lambda r, p=p: _and(p[0][1](r), p[1][1](r)))),
        st.tuples(inner, inner).map(lambda p: (f"({p[0][0]} OR {p[1][0]})",
                                               lambda r, p=p: _or(p[0][1](r), p[1][1](r)))),
        inner.map(lambda p: (f"NOT {p[0]}", lambda r, p=p: None if p[1](r) is None else not p[1](r)))),
        max_leaves=4)


def _kept(pruner: Pruner, table: HudiTable, text: str) -> set[str]:
    return {s.file_id for s in pruner.run(hiveql.parse_hiveql(text, table_sarg_schema(table))).slices}


def _check_table(root: Path, data: st.DataObject, with_mdt: bool) -> None:
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    indexes = KeyIndexes.open(table, slices)
    assert indexes.complex_fields == FIELDS, indexes.problems
    if with_mdt:
        assert indexes._mdt is not None and indexes.secondary == {"c": "secondary_index_c_idx"}, indexes.problems
    pruner = Pruner(table, ColumnStatsIndex(table, persist=False), slices)
    rows = [(fid, r) for fid, t in _groups_of_rows(root).items() for r in t.select(["a", "b", "c"]).to_pylist()]
    holders: dict[tuple[Any, Any], set[str]] = {}
    by_value: dict[Any, set[str]] = {}
    for fid, r in rows:
        holders.setdefault((r["a"], r["b"]), set()).add(fid)
        by_value.setdefault(r["c"], set()).add(fid)
    assert all(len(fids) == 1 for fids in holders.values())     # upserts: one group per key
    for (a, b), fids in holders.items():
        if b is None:
            continue                        # a null key field cannot be fixed by equality
        kept = _kept(pruner, table, f"`a` = {_quote(a)} AND `b` = {b}")
        if with_mdt:
            assert kept == fids, (a, b, kept, fids)
        else:
            assert fids <= kept, (a, b)
    if with_mdt:
        for value, fids in by_value.items():
            if value is not None:
                assert _kept(pruner, table, f"`c` = {_quote(value)}") == fids, value
        assert _kept(pruner, table, "`c` = 'no such'") == set()
    for _ in range(8):
        text, truth = data.draw(_filters())
        want = {fid for fid, r in rows if truth(r) is True}
        assert want <= _kept(pruner, table, text), text


@pytest.mark.parametrize("with_mdt", [True, False], ids=["record+secondary index", "bloom filters only"])
def test_complex_key_indexes_are_exact_and_lose_no_row(tmp_path_factory: pytest.TempPathFactory,
                                                       with_mdt: bool) -> None:
    @settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.lists(_row(), min_size=1, max_size=12).map(_unique), st.lists(_row(), max_size=6).map(_unique),
           st.data())
    def check(first: list[Any], second: list[Any], data: st.DataObject) -> None:
        # an update moves no key across partitions (Hudi's global index would, a partitioned table does not)
        homes = {(r[0], r[1]): r[3] for r in first}
        second = [(a, b, c, homes.get((a, b), p)) for a, b, c, p in second]
        root = tmp_path_factory.mktemp("complex") / "t"
        _write(root, first, second, with_mdt)
        _check_table(root, data, with_mdt)

    check()


def _complex_fixtures_with_mdt() -> list[str]:
    """Real tables keyed on several fields whose metadata table has a record index (none of the shared ones has,
    so far: their complex-key tables have no metadata table)."""
    import zipfile

    out = []
    for name in FIXTURE_NAMES:
        with zipfile.ZipFile(SHARED_TABLES / f"{name}.zip") as zf:
            props = [m for m in zf.namelist() if m.endswith(".hoodie/hoodie.properties") and "/metadata/" not in m]
            text = zf.read(props[0]).decode("latin-1") if props else ""
            has_ri = any("/.hoodie/metadata/record_index/" in m for m in zf.namelist())
        fields = next((line.split("=", 1)[1] for line in text.splitlines()
                       if line.startswith("hoodie.table.recordkey.fields=")), "")
        if "," in fields and has_ri:
            out.append(name)
    return out


@pytest.mark.parametrize("name", _complex_fixtures_with_mdt())
def test_every_key_of_a_real_complex_key_table_is_exact(shared_tables: dict[str, Path], name: str) -> None:
    root = shared_tables[name]
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    fields = table.properties.record_key_fields
    pruner = Pruner(table, ColumnStatsIndex(table, persist=False), slices)
    for fid, rows in _groups_of_rows(root).items():
        for r in rows.select(fields).to_pylist():
            if None in r.values():
                continue
            text = " AND ".join(f"`{f}` = {_quote(r[f])}" for f in fields)
            assert _kept(pruner, table, text) == {fid}, (name, text)
