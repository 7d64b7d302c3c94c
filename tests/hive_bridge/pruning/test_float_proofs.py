"""Float ranges proven (:mod:`hive_bridge.pruning.float_proofs`): files kept only because a float or double
column's NaN count or bounds are unknown get that column's exact facts read once, and are judged again.

Real files throughout: the shared merge-on-read trip tables (``fare``, footers without NaN counts, metadata-table
float bounds never trusted) and tables the test writer makes with NaN, -0.0, NULL, all-NaN and all-null files.
The truth is the row evaluator with Spark SQL's semantics (``tests/hive_bridge/rowmodel.py``: NaN above every
number, -0.0 = 0.0, NULL unknown) over the values read back with pyarrow: every file holding a match is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge import config
from hive_bridge.pruning import Pruner
from hive_bridge.pruning.float_proofs import read_float_facts
from hive_bridge.pruning.pruner import ListStatusResult
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.merge_model import block_filter, merge_slice
from hive_bridge.testing.writer import HudiWriter
from tests.hive_bridge.rowmodel import KINDS, modes, random_sarg, row_truth

NAN = float("nan")
INF = float("inf")
TRIPS = ["quickstart_trips_table.mor.avro.v6_trips_8i1u", "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"]
#: across the property's examples: files the proofs skipped that the plan without them kept; files holding no
#: number in ``f`` (only NaN and nulls) skipped by ``f < c``
PROVEN = {"skipped": 0, "examples": 0, "no_number_skipped": 0}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test with its own cache folder and nothing remembered in memory."""
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    for name in ("HIVE_BRIDGE_FLOAT_PROOFS", "HIVE_BRIDGE_FLOAT_PROOF_MB", "HIVE_BRIDGE_COUNT_NANS"):
        monkeypatch.delenv(name, raising=False)
    config.clear_caches()


def _plan(table: HudiTable, text: str | sarg.SearchArgument, schema: dict[str, str], query_type: str = "snapshot",
          **index_kw: Any) -> ListStatusResult:
    index = ColumnStatsIndex(table, persist=False, **index_kw)
    filt = text if isinstance(text, sarg.SearchArgument) else sarg.read_filter(text, schema)
    return Pruner(table, index, table.latest_file_slices(), query_type).run(filt, explain=True)


def _kept_names(result: ListStatusResult) -> set[str]:
    return {Path(f.path).name for f in result.files}


# ------------------------------------------------------------------------------------ the writer's tables
SCHEMA = {"id": "bigint", "f": "double", "g": "float"}
POOLS: dict[str, list[float | None]] = {
    "numbers": [0.5, 1.0, 2.5, 3.0, -3.0, 100.0, 1e300],
    "with NaN": [NAN, 0.5, 2.0, -0.5],
    "all NaN": [NAN],
    "NaN and null": [NAN, None],
    "all null": [None],
    "signed zero": [-0.0, 0.0, None],
    "anything": [NAN, -0.0, 0.0, None, 0.5, -0.5, 2.0, 3.0, INF, -INF, 1e300, -1e300, 5e-324],
}


def _write(root: Path, files: list[list[tuple[float | None, float | None]]]) -> HudiTable:
    writer = HudiWriter(root, record_key_fields=("id",))
    next_id = 0
    for rows in files:   # one insert per file: a file group each
        ids = list(range(next_id, next_id + len(rows)))
        next_id += len(rows)
        writer.insert(pa.table({"id": pa.array(ids, pa.int64()), "f": pa.array([r[0] for r in rows], pa.float64()),
                                "g": pa.array([r[1] for r in rows], pa.float32())}))
    return HudiTable.open(root)


def _matching_files(table: HudiTable, s: sarg.SearchArgument) -> set[str]:
    """Files holding a row the filter may be true for (under every reading of the row model)."""
    out = set()
    for sl in table.latest_file_slices():
        assert sl.base_file is not None
        data = pq.read_table(sl.base_file.full_path, columns=["f", "g"]).to_pylist()
        if any(row_truth(s, KINDS, row, mode).value[0] for row in data for mode in modes("UTC")):
            out.add(Path(sl.base_file.path).name)
    return out


@st.composite
def _files(draw: Any) -> list[list[tuple[float | None, float | None]]]:
    out = []
    for _ in range(draw(st.integers(2, 6))):
        pf = POOLS[draw(st.sampled_from(sorted(POOLS)))]
        pg = POOLS[draw(st.sampled_from(sorted(POOLS)))]
        out.append(draw(st.lists(st.tuples(st.sampled_from(pf), st.sampled_from(pg)), min_size=1, max_size=5)))
    return out


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=_files(), data=st.data())
def test_kept_files_hold_every_match(files: list[list[tuple[float | None, float | None]]], data: st.DataObject,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    s = data.draw(random_sarg(["f", "g"]))
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.setenv("HIVE_BRIDGE_CACHE", os.path.join(tmp, "cache"))
        config.clear_caches()
        table = _write(Path(tmp) / "t", files)
        proven = _plan(table, s, SCHEMA)
        monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOFS", "0")
        before = _plan(table, s, SCHEMA)
        monkeypatch.delenv("HIVE_BRIDGE_FLOAT_PROOFS")
        truth = _matching_files(table, s)
        kept = _kept_names(proven)
        assert truth <= kept, f"{s}: a file holding a match was skipped; kept {kept}, matches {truth}"
        assert kept <= _kept_names(before)       # proofs only ever skip more
        report = proven.float_proofs
        if report is not None:
            assert report.reads + report.cache_hits >= report.proven_nan_free + report.holding_nan
            assert report.dropped == len(_kept_names(before) - kept)
            assert report.unreadable == report.over_budget == 0
        PROVEN["skipped"] += len(_kept_names(before) - kept)
        PROVEN["examples"] += 1
        # an ordered range below a number: a file holding no number in f (only NaN and nulls) has no row below
        # it once its facts are read (NaN sorts above every number)
        below = sarg.read_filter(f"f < {data.draw(st.sampled_from(['0.0', '1.0', '3.0', '1e301']))}", SCHEMA)
        kept_below = _kept_names(_plan(table, below, SCHEMA))
        assert _matching_files(table, below) <= kept_below, f"{below}: a file holding a match was skipped"
        no_number = {Path(sl.base_file.path).name for sl in table.latest_file_slices() if sl.base_file is not None
                      and _no_number(pq.read_table(sl.base_file.full_path, columns=["f"]).column("f").to_pylist())}
        assert not no_number & kept_below, f"{below}: files holding no number kept"
        PROVEN["no_number_skipped"] += len(no_number - kept_below)


def _no_number(values: list[float | None]) -> bool:
    """Only NaN and nulls, one NaN at least."""
    return any(v is not None for v in values) and all(v is None or v != v for v in values)


def teardown_module() -> None:
    # the property had teeth: the proofs skipped files the plan without them kept, among them files holding no
    # number in f judged by f < c
    if PROVEN["examples"]:
        assert PROVEN["skipped"] > 0 and PROVEN["no_number_skipped"] > 0, PROVEN


def test_nan_keeps_a_greater_than_range_and_signed_zero_equals_zero(tmp_path: Path) -> None:
    table = _write(tmp_path / "t", [
        [(1.0, 1.0), (NAN, 1.0)],        # NaN: v > 90 may match (NaN is above every number)
        [(1.0, 1.0), (2.0, 1.0)],        # 1..2, no NaN
        [(-0.0, 1.0), (None, 1.0)],      # -0.0 equals 0.0
        [(NAN, 1.0), (NAN, 1.0)],        # all NaN
        [(None, 1.0)],                   # all null
    ])
    names = [Path(sl.base_file.path).name for sl in table.latest_file_slices()  # type: ignore[union-attr]
             if sl.base_file is not None]
    by_rows = {repr(pq.read_table(sl.base_file.full_path, columns=["f"]).column("f").to_pylist()):
               Path(sl.base_file.path).name for sl in table.latest_file_slices() if sl.base_file is not None}
    nan_file, plain, zero, all_nan, all_null = (by_rows[repr(v)] for v in (
        [1.0, NAN], [1.0, 2.0], [-0.0, None], [NAN, NAN], [None]))
    assert len(set(names)) == 5
    result = _plan(table, "f > 90", SCHEMA)
    assert _kept_names(result) == {nan_file, all_nan}
    assert result.float_proofs is not None
    assert result.float_proofs.holding_nan >= 1 and result.float_proofs.proven_nan_free >= 2
    # the all-NaN file holds no number once its facts are read (NaN count = rows - nulls, no bound): NaN is above
    # every number, so no row is below 0, and the file is skipped as its rows say; NOT (f < 0), f <> 0 and
    # f = NaN are true for its NaN rows: kept
    below = _plan(table, "f < 0", SCHEMA)
    assert _kept_names(below) == set() == _matching_files(table, sarg.read_filter("f < 0", SCHEMA))
    assert below.float_proofs is not None and below.float_proofs.dropped >= 1
    for text in ("NOT f < 0", "f <> 0", "f >= 0"):
        kept = _kept_names(_plan(table, text, SCHEMA))
        assert all_nan in kept and _matching_files(table, sarg.read_filter(text, SCHEMA)) <= kept
    is_nan = sarg.parse("leaf-(EQUALS f NaN)", SCHEMA)
    assert _kept_names(_plan(table, is_nan, SCHEMA)) == {nan_file, all_nan} == _matching_files(table, is_nan)
    assert zero in _kept_names(_plan(table, "f = 0", SCHEMA))
    assert zero not in _kept_names(_plan(table, "f < 0", SCHEMA))
    assert zero in _kept_names(_plan(table, "f >= 0", SCHEMA)) and plain not in _kept_names(
        _plan(table, "f >= 5", SCHEMA))
    assert all_null not in _kept_names(_plan(table, "f >= 0", SCHEMA))


def test_facts_read_from_one_column(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"v": pa.array([NAN, -0.0, None, 3.5, -0.0, None], pa.float64()),
                             "w": pa.array(range(6), pa.int64())}), path, row_group_size=2)
    r = read_float_facts(None, str(path), "v")
    assert r.error is None and r.facts is not None
    assert r.facts == (6, 2, 1, 0.0, 3.5)
    assert str(r.facts.min) == "0.0"             # -0.0 kept as 0.0, as Spark compares it
    md = pq.read_metadata(path)
    assert r.nbytes == md.serialized_size + sum(md.row_group(g).column(0).total_compressed_size for g in range(3))
    missing = read_float_facts(None, str(tmp_path / "gone.parquet"), "v")
    assert missing.facts is None and missing.error and "gone.parquet" in missing.error


# -------------------------------------------------------------------------------------------- real tables
@pytest.mark.parametrize("name", TRIPS)
@pytest.mark.parametrize("text", ["fare > 90", "fare < 10", "fare <= 20.5", "NOT fare < 50"])
def test_real_trip_tables_prune_fare_ranges(fixture_tables: dict[str, Path], name: str, text: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    table = HudiTable.open(fixture_tables[name])
    schema = {f.name: "double" if pa.types.is_floating(f.type) else "string" for f in table.arrow_schema()}
    filt = sarg.read_filter(text, schema)
    for query_type in ("read_optimized", "snapshot"):
        monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOFS", "0")
        before = _plan(table, filt, schema, query_type)
        monkeypatch.delenv("HIVE_BRIDGE_FLOAT_PROOFS")
        after = _plan(table, filt, schema, query_type)
        # the truth: every slice's rows read back (a merged slice's merged rows, the writer's merge of its real
        # base file and log blocks), its fare values judged
        matching = set()
        ok = block_filter(table)
        for sl in table.latest_file_slices():
            if sl.base_file is None:
                continue
            if sl.log_files and query_type == "snapshot":
                rows = merge_slice(table, ok, sl, table.properties.precombine_field).table
                fares = [] if rows is None else rows.column("fare").to_pylist()
            else:
                fares = pq.read_table(sl.base_file.full_path, columns=["fare"]).column("fare").to_pylist()
            if any(row_truth(filt, {"fare": KINDS["f"]}, {"fare": v}, mode).value[0]
                   for v in fares for mode in modes("UTC")):
                matching.add(Path(sl.base_file.path).name)
        merged = {Path(sl.base_file.path).name for sl in table.latest_file_slices()
                  if sl.base_file is not None and sl.log_files and query_type == "snapshot"}
        assert matching <= _kept_names(after)
        assert _kept_names(after) <= _kept_names(before)
        assert after.float_proofs is not None and after.float_proofs.unreadable == 0
        if "v8" in name and merged:
            # its merged slice's parts (base file, log file: the metadata table's untrusted float bounds) proven
            assert after.float_proofs.log_reads == 1
            assert _kept_names(after) & merged == matching & merged
        plain = {Path(sl.base_file.path).name for sl in table.latest_file_slices()
                 if sl.base_file is not None and not (sl.log_files and query_type == "snapshot")}
        # every plain base file without a match is now skipped (the trip tables hold no NaN): counts drop
        assert _kept_names(after) & plain == matching & plain
        # (a `<` range prunes by min without NaN facts on footers: NaN is above every number)
        needed = (_kept_names(before) & plain) - matching
        if needed:
            assert after.files_kept < before.files_kept
        if text == "fare > 90" or "v8" in name:
            assert needed == plain - matching       # kept before only for lack of float facts
        assert after.float_proofs.proven_nan_free >= len(needed)
        assert after.float_proofs.holding_nan == 0


def test_real_table_with_metadata_table_stats_and_second_plan_reads_nothing(fixture_tables: dict[str, Path]) -> None:
    table = HudiTable.open(fixture_tables[TRIPS[1]])
    schema = {"fare": "double"}
    first = _plan(table, "fare > 90", schema, "read_optimized")
    assert first.stats_sources == {"metadata table": 3}     # float bounds there are never trusted
    r1 = first.float_proofs
    assert r1 is not None and r1.reads == r1.candidates > 0 and r1.bytes_read > 0 and r1.cache_hits == 0
    assert first.files_kept < first.files_total
    # explain names the facts read as a source of every file proven, and its reason shows the NaN count of 0
    proven = [v for v in first.verdicts if any(src.startswith("float facts read") for src in v.sources)]
    assert len(proven) == r1.proven_nan_free and all("nan_count=0" in v.reason for v in proven)
    # a new plan in this process: remembered in memory
    second = _plan(table, "fare > 90", schema, "read_optimized")
    assert second.float_proofs is not None and second.float_proofs.reads == 0
    assert second.float_proofs.cache_hits == r1.reads and second.float_proofs.bytes_read == 0
    assert _kept_names(second) == _kept_names(first)
    # a new process (memory emptied): remembered in the cache folder
    config.clear_caches()
    third = _plan(table, "fare > 90", schema, "read_optimized")
    assert third.float_proofs is not None and third.float_proofs.reads == 0
    assert third.float_proofs.cache_hits == r1.reads and _kept_names(third) == _kept_names(first)
    assert list((config.settings().cache_root / "float-facts").glob("*/facts-*.json"))
    # the same pruner judging a second filter: the facts are in its statistics already, nothing to look up
    index = ColumnStatsIndex(table, persist=False)
    pruner = Pruner(table, index, table.latest_file_slices(), "read_optimized")
    pruner.run(sarg.read_filter("fare > 90", schema))
    again = pruner.run(sarg.read_filter("fare > 95", schema))
    assert again.float_proofs is not None and again.float_proofs.reads == again.float_proofs.cache_hits == 0
    assert again.files_kept <= first.files_kept


# ------------------------------------------------------------------------------------ failures and budget
def _nan_free_table(root: Path, files: int = 6) -> HudiTable:
    return _write(root, [[(float(10 * k + j), 1.0) for j in range(5)] for k in range(files)])


def test_unreadable_file_is_kept(tmp_path: Path) -> None:
    table = _nan_free_table(tmp_path / "t")
    index = ColumnStatsIndex(table, persist=False)
    index.table()                                # footers read while every file is whole
    victim = table.latest_file_slices()[0].base_file
    assert victim is not None
    size = os.path.getsize(victim.full_path)
    Path(victim.full_path).write_bytes(b"\0" * size)   # same size: the listing cannot tell
    result = Pruner(table, index, table.latest_file_slices()).run(sarg.read_filter("f > 1000", SCHEMA))
    assert _kept_names(result) == {Path(victim.path).name}
    assert result.float_proofs is not None and result.float_proofs.unreadable == 1
    assert result.float_proofs.problems and Path(victim.path).name in result.float_proofs.problems[0]


def test_budget_keeps_the_files_past_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _nan_free_table(tmp_path / "t")
    monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOFS", "2")
    result = _plan(table, "f > 1000", SCHEMA)
    assert result.float_proofs is not None
    assert (result.float_proofs.reads, result.float_proofs.over_budget) == (2, 4)
    assert result.files_kept == 4
    monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOFS", "100")
    monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOF_MB", "0")
    none = _plan(table, "f > 1000", SCHEMA)
    # no bytes to spend: the two files proven before are remembered, the other four stay kept
    assert none.float_proofs is not None and none.float_proofs.reads == 0
    assert none.float_proofs.cache_hits == 2 and none.float_proofs.over_budget == 4 and none.files_kept == 4
    monkeypatch.delenv("HIVE_BRIDGE_FLOAT_PROOF_MB")
    assert _plan(table, "f > 1000", SCHEMA).files_kept == 0


def test_explain_reports_the_proofs(tmp_path: Path) -> None:
    table = _nan_free_table(tmp_path / "t", files=3)
    env = {**os.environ, "HIVE_BRIDGE_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    run = [sys.executable, "-m", "hive_bridge", "explain", "--table", str(table.base_path), "f > 1000"]
    doc = json.loads(subprocess.run([*run, "--json"], env=env, check=True, capture_output=True, text=True).stdout)
    assert doc["files_kept"] == 0 and doc["float_proofs"]["proven_nan_free"] == 3
    assert doc["float_proofs"]["reads"] == 3 and doc["float_proofs"]["bytes_read"] > 0
    text = subprocess.run(run, env=env, check=True, capture_output=True, text=True).stdout
    assert "3 proven free of NaN" in " ".join(text.split()) and "3 remembered" in " ".join(text.split())


def test_nan_counts_in_the_footer_need_no_proof(tmp_path: Path) -> None:
    from hive_bridge.testing.parquet_nan import give_base_files_nan_counts

    table = _nan_free_table(tmp_path / "t", files=3)
    give_base_files_nan_counts(table.base_path)
    result = _plan(HudiTable.open(table.base_path), "f > 1000", SCHEMA)
    assert result.files_kept == 0 and result.float_proofs is not None and result.float_proofs.candidates == 0
