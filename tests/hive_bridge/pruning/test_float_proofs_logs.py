"""Float ranges proven on merge-on-read slices with log files (:mod:`hive_bridge.pruning.float_verdicts`): every
part of a slice kept only for lack of a float column's facts (its base file's column chunks, each log file's data
blocks) gets them read, and the slice is judged by its parts' facts.

Real parts throughout: merge-on-read tables the test writer makes (Avro and parquet data blocks, delete blocks,
log-only file groups, updates moving a value across a bound, NaN, -0.0, NULL, all-NaN blocks), with the metadata
table Hudi 1.0 writes (whose float bounds hive-bridge never trusts) or without one (base files from footers
without NaN counts); and the real version-8 trip table. The truth is each slice's merged rows (the writer's merge
model, which reads the real log blocks) judged by the row evaluator with Spark SQL's semantics: no slice holding
a matching row is dropped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge import config
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.pruning import Pruner
from hive_bridge.pruning.pruner import ListStatusResult
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import write_metadata_table
from hive_bridge.testing.merge_model import block_filter, merge_slice
from hive_bridge.testing.writer import MERGE_ON_READ, HudiWriter
from tests.hive_bridge.rowmodel import KINDS, modes, random_sarg, row_truth

NAN = float("nan")
SCHEMA = {"id": "bigint", "f": "double", "g": "float"}
V8_TRIPS = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
POOLS: dict[str, list[float | None]] = {
    "numbers": [0.5, 1.0, 2.5, 3.0, -3.0, 100.0, 1e300],
    "with NaN": [NAN, 0.5, 2.0, -0.5],
    "all NaN": [NAN],
    "NaN and null": [NAN, None],
    "all null": [None],
    "signed zero": [-0.0, 0.0, None],
    "anything": [NAN, -0.0, 0.0, None, 0.5, -0.5, 2.0, 3.0, float("inf"), float("-inf"), 1e300],
}
#: across the property's examples: merged slices the proofs dropped that the plan without them kept, log reads;
#: merged slices with log files whose merged rows hold no number in ``f`` (only NaN and nulls) dropped by ``f < c``
TEETH = {"merged_dropped": 0, "log_reads": 0, "examples": 0, "no_number_dropped": 0}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    for name in ("HIVE_BRIDGE_FLOAT_PROOFS", "HIVE_BRIDGE_FLOAT_PROOF_MB", "HIVE_BRIDGE_COUNT_NANS"):
        monkeypatch.delenv(name, raising=False)
    config.clear_caches()


def _plan(table: HudiTable, text: str | sarg.SearchArgument, schema: dict[str, str] = SCHEMA) -> ListStatusResult:
    index = ColumnStatsIndex(table, persist=False)
    filt = text if isinstance(text, sarg.SearchArgument) else sarg.read_filter(text, schema)
    return Pruner(table, index, table.latest_file_slices()).run(filt, explain=True)


def _ids(slices: list[FileSlice]) -> set[tuple[str, str]]:
    return {(s.partition_path, s.file_id) for s in slices}


def _rows(values: list[tuple[float | None, float | None]], ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "f": pa.array([v[0] for v in values], pa.float64()),
                     "g": pa.array([v[1] for v in values], pa.float32())})


def _matching_slices(table: HudiTable, s: sarg.SearchArgument) -> set[tuple[str, str]]:
    """Slices whose merged rows hold a row the filter may be true for (under every reading of the row model)."""
    ok = block_filter(table)
    out = set()
    for sl in table.latest_file_slices():
        merged = merge_slice(table, ok, sl, table.properties.precombine_field).table
        rows = [] if merged is None else merged.select(["f", "g"]).to_pylist()
        if any(row_truth(s, KINDS, row, mode).value[0] for row in rows for mode in modes("UTC")):
            out.add((sl.partition_path, sl.file_id))
    return out


# ------------------------------------------------------------------------------------------ the property
Values = list[tuple[float | None, float | None]]


@st.composite
def _values(draw: Any, n: int | None = None) -> Values:
    pf = POOLS[draw(st.sampled_from(sorted(POOLS)))]
    pg = POOLS[draw(st.sampled_from(sorted(POOLS)))]
    size = n if n is not None else draw(st.integers(1, 4))
    return draw(st.lists(st.tuples(st.sampled_from(pf), st.sampled_from(pg)), min_size=size, max_size=size))


@st.composite
def _history(draw: Any) -> list[tuple[str, Any]]:
    """Inserts (a file group each), then upserts of existing keys (Avro or parquet blocks), deletes, and inserts
    into log-only file groups."""
    ops: list[tuple[str, Any]] = [("insert", draw(_values())) for _ in range(draw(st.integers(2, 4)))]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["upsert", "upsert", "delete", "log insert"]))
        ops.append((kind, (draw(_values()), draw(st.sampled_from(["avro", "parquet"])), draw(st.randoms()))))
    return ops


def _write(root: Path, ops: list[tuple[str, Any]], mdt: bool) -> HudiTable:
    writer = HudiWriter(root, version=8, table_type=MERGE_ON_READ, record_key_fields=("id",))
    next_id = 0
    for kind, arg in ops:
        if kind == "insert":
            writer.insert(_rows(arg, list(range(next_id, next_id + len(arg)))))
            next_id += len(arg)
            continue
        values, block_format, rnd = arg
        if kind == "log insert":
            writer.insert(_rows(values, list(range(next_id, next_id + len(values)))), inserts_to_logs=True,
                          block_format=block_format)
            next_id += len(values)
            continue
        ids = rnd.sample(range(next_id), min(len(values), next_id))
        if kind == "delete":
            writer.delete(pa.table({"id": pa.array(ids, pa.int64())}))
        else:
            writer.upsert(_rows(values[:len(ids)], ids), block_format=block_format)
    if mdt:
        write_metadata_table(root)
    return HudiTable.open(root)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=_history(), mdt=st.booleans(), data=st.data())
def test_no_slice_holding_a_merged_match_is_dropped(ops: list[tuple[str, Any]], mdt: bool, data: st.DataObject,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    s = data.draw(random_sarg(["f", "g"]))
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.setenv("HIVE_BRIDGE_CACHE", os.path.join(tmp, "cache"))
        config.clear_caches()
        table = _write(Path(tmp) / "t", ops, mdt)
        proven = _plan(table, s)
        monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOFS", "0")
        before = _plan(table, s)
        monkeypatch.delenv("HIVE_BRIDGE_FLOAT_PROOFS")
        truth = _matching_slices(table, s)
        kept = _ids(proven.slices)
        assert truth <= kept, f"{s}: a slice holding a merged match was dropped; kept {kept}, matches {truth}"
        assert kept <= _ids(before.slices)                   # proofs only ever drop more
        report = proven.float_proofs
        if report is not None:
            assert report.unreadable == report.over_budget == 0, report.problems
            assert report.dropped == len(_ids(before.slices) - kept)
            assert report.reads + report.cache_hits >= report.log_reads
        merged = {(sl.partition_path, sl.file_id) for sl in table.latest_file_slices() if sl.log_files}
        TEETH["merged_dropped"] += len((_ids(before.slices) - kept) & merged)
        TEETH["log_reads"] += report.log_reads if report is not None else 0
        TEETH["examples"] += 1
        # an ordered range below a number: NaN sorts above every number, so a slice whose parts hold no number
        # in f (only NaN and nulls) is dropped once their facts are known
        below = sarg.read_filter(f"f < {data.draw(st.sampled_from(['0.0', '1.0', '3.0', '1e301']))}", SCHEMA)
        kept_below = _ids(_plan(table, below).slices)
        assert _matching_slices(table, below) <= kept_below, f"{below}: a slice holding a merged match was dropped"
        ok = block_filter(table)
        for sl in table.latest_file_slices():
            rows = merge_slice(table, ok, sl, table.properties.precombine_field).table
            values = [] if rows is None else rows.column("f").to_pylist()
            if sl.log_files and any(v is not None for v in values) and all(v is None or v != v for v in values):
                TEETH["no_number_dropped"] += (sl.partition_path, sl.file_id) not in kept_below


def teardown_module() -> None:
    # the property had teeth: merged slices were dropped thanks to proofs, log files were read, merged slices
    # holding no number in f were dropped by f < c
    if TEETH["examples"]:
        assert TEETH["merged_dropped"] > 0 and TEETH["log_reads"] > 0 and TEETH["no_number_dropped"] > 0, TEETH


# ------------------------------------------------------------------------------------------ examples
def _slice_of(table: HudiTable, key: int) -> tuple[str, str]:
    ok = block_filter(table)
    for sl in table.latest_file_slices():
        merged = merge_slice(table, ok, sl, None).table
        if merged is not None and key in merged.column("id").to_pylist():
            return sl.partition_path, sl.file_id
    raise AssertionError(f"no slice holds id {key}")


def _groups(root: Path) -> tuple[HudiWriter, dict[str, int]]:
    """Five file groups of a version-8 merge-on-read table: first ids 0, 10, 20, 30, 40 (values 1.0..4.0)."""
    writer = HudiWriter(root, version=8, table_type=MERGE_ON_READ, record_key_fields=("id",))
    for g in range(5):
        writer.insert(_rows([(1.0 + k, 1.0) for k in range(4)], [10 * g + k for k in range(4)]))
    return writer, {"nan": 0, "zero": 10, "moved": 20, "all_nan": 30, "plain": 40}


@pytest.mark.parametrize("mdt", [True, False])
def test_nan_signed_zero_updates_and_deletes_in_logs(tmp_path: Path, mdt: bool) -> None:
    writer, first = _groups(tmp_path / "t")
    writer.upsert(_rows([(NAN, 1.0)], [first["nan"]]))                       # NaN in a log: v > 90 may match
    writer.upsert(_rows([(-0.0, 1.0)], [first["zero"] + 1]), block_format="parquet")   # -0.0 equals 0.0
    writer.upsert(_rows([(95.0, 1.0)], [first["moved"]]))                    # moved above 90 ...
    writer.delete(pa.table({"id": pa.array([first["moved"] + 1], pa.int64())}))
    writer.upsert(_rows([(NAN, 1.0), (NAN, 1.0)], [first["all_nan"], first["all_nan"] + 1]))  # an all-NaN block
    writer.upsert(_rows([(2.0, 1.0)], [first["plain"]]))
    if mdt:
        write_metadata_table(tmp_path / "t")
    table = HudiTable.open(tmp_path / "t")
    group = {name: _slice_of(table, key) for name, key in first.items()}
    assert all(sl.log_files for sl in table.latest_file_slices())

    above = _plan(table, "f > 90")
    assert _ids(above.slices) == {group["nan"], group["moved"], group["all_nan"]}
    report = above.float_proofs
    assert report is not None and report.unreadable == report.over_budget == 0
    if mdt:
        # the metadata table's float bounds are never trusted: every slice's parts read, the base files and the
        # log files with values (not the delete block's)
        assert (report.candidates, report.holding_nan, report.proven_nan_free) == (5, 2, 3)
        assert report.log_reads == 5 and report.reads == 10
    else:
        # log statistics from their blocks (NaN counted), base files' footers without NaN counts: the base
        # files of the two slices a NaN-free base would drop are read; no log file. The two slices whose NaN log
        # block holds no number keep their base file's bounds (such a block gives none) and are kept by that
        # block's NaN whatever their base file holds: nothing is read for them
        assert (report.candidates, report.holding_nan, report.proven_nan_free) == (2, 0, 2)
        assert report.log_reads == 0 and report.reads == 2
    assert report.dropped == 2
    # the value moved back below the bound: the earlier log record still counts (a part may hold it), kept
    writer.upsert(_rows([(3.0, 1.0)], [first["moved"]]))
    if mdt:
        write_metadata_table(tmp_path / "t", overwrite=True)
    table = HudiTable.open(tmp_path / "t")
    assert group["moved"] in _ids(_plan(table, "f > 90").slices)
    below = _plan(table, "f < 0")
    # -0.0 is not below 0; a part holding NaN and no number (NaN count = rows - nulls) has no row below 0: NaN
    # is above every number. The slices whose NaN log block has no number are dropped, as their merged rows say
    assert _ids(below.slices) == set() == _matching_slices(table, sarg.read_filter("f < 0", SCHEMA))
    for text in ("NOT f < 0", "f <> 0"):
        kept = _ids(_plan(table, text).slices)
        assert {group["nan"], group["all_nan"]} <= kept
        assert _matching_slices(table, sarg.read_filter(text, SCHEMA)) <= kept
    assert group["zero"] in _ids(_plan(table, "f = 0").slices) and group["zero"] not in _ids(below.slices)
    assert _ids(_plan(table, "f > 1000").slices) == {group["nan"], group["all_nan"]}
    # explain names the parts whose facts were read
    sources = [src for v in above.verdicts for src in v.sources]
    assert any(src.startswith("float facts read from the base file") for src in sources)
    assert any(src.startswith("float facts read from log file .") for src in sources) == mdt


def test_merged_slices_are_remembered_and_a_grown_log_file_is_read_again(tmp_path: Path) -> None:
    writer, first = _groups(tmp_path / "t")
    writer.upsert(_rows([(2.0, 1.0)], [first["plain"]]))
    writer.upsert(_rows([(NAN, 1.0)], [first["nan"]]))
    write_metadata_table(tmp_path / "t")
    table = HudiTable.open(tmp_path / "t")
    plain, nan = _slice_of(table, first["plain"]), _slice_of(table, first["nan"])
    one = _plan(table, "f > 90")
    assert _ids(one.slices) == {nan}
    r1 = one.float_proofs
    assert r1 is not None and r1.log_reads == 2 and r1.reads == 7 and r1.bytes_read > 0
    config.clear_caches()                                 # a new process: remembered in the cache folder
    two = _plan(table, "f > 90")
    assert two.float_proofs is not None and two.float_proofs.reads == 0 and two.float_proofs.cache_hits == 7
    assert _ids(two.slices) == {nan}
    # the plain slice's log file grows in place (a version-6 writer appends blocks): the NaN slice's log block
    # appended to it; its remembered facts no longer apply
    logs = {(s.partition_path, s.file_id): s.log_files[0] for s in table.latest_file_slices() if s.log_files}
    grown = Path(logs[plain].full_path)
    grown.write_bytes(grown.read_bytes() + Path(logs[nan].full_path).read_bytes())
    three = _plan(HudiTable.open(tmp_path / "t"), "f > 90")
    r3 = three.float_proofs
    assert r3 is not None and r3.log_reads == 1 and r3.cache_hits == 6
    assert plain in _ids(three.slices)                    # NaN now (or rows unlike its statistics): kept
    assert r3.holding_nan + r3.unreadable >= 1


def test_damaged_log_and_budget_keep_the_slice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer, first = _groups(tmp_path / "t")
    for g in ("plain", "zero", "moved"):
        writer.upsert(_rows([(2.0, 1.0)], [first[g]]))
    write_metadata_table(tmp_path / "t")
    table = HudiTable.open(tmp_path / "t")
    monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOFS", "3")  # 3 column reads: the first slice's two parts only
    limited = _plan(table, "f > 90")
    assert limited.float_proofs is not None and limited.float_proofs.over_budget > 0
    merged = {(s.partition_path, s.file_id) for s in table.latest_file_slices() if s.log_files}
    assert len(_ids(limited.slices) & merged) >= 2     # slices past the budget kept
    monkeypatch.delenv("HIVE_BRIDGE_FLOAT_PROOFS")
    # a fresh cache: the limited plan may have proven (and remembered) the parts of the slices damaged below
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "fresh-cache"))
    victim, zeroed = [s for s in table.latest_file_slices() if s.log_files][:2]
    # a log file gone after the listing: unreadable, its slice kept and counted
    index = ColumnStatsIndex(table, persist=False)
    pruner = Pruner(table, index, table.latest_file_slices())
    config.clear_caches()
    Path(victim.log_files[0].full_path).unlink()
    gone = pruner.run(sarg.read_filter("f > 90", SCHEMA))
    assert _ids(gone.slices) == {(victim.partition_path, victim.file_id)}
    assert gone.float_proofs is not None and gone.float_proofs.unreadable == 1
    assert victim.log_files[0].name in gone.float_proofs.problems[0]
    # a log file of zeros (same size: the listing cannot tell) is one corrupt region, which Hudi's reader skips:
    # no record of it reaches a merged row, as the slice statistics count it; the slice judged by its base file
    path = Path(zeroed.log_files[0].full_path)
    path.write_bytes(b"\0" * path.stat().st_size)
    config.clear_caches()
    now = HudiTable.open(tmp_path / "t")
    damaged = _plan(now, "f > 90")
    assert (zeroed.partition_path, zeroed.file_id) not in _ids(damaged.slices)
    assert (zeroed.partition_path, zeroed.file_id) not in _matching_slices(now, sarg.read_filter("f > 90", SCHEMA))


# -------------------------------------------------------------------------------------------- real table
@pytest.mark.parametrize(("text", "kept"), [("fare > 90", 1), ("fare > 1e9", 0)])
def test_real_v8_trips_keep_what_hudi_keeps(fixture_tables: dict[str, Path], text: str, kept: int) -> None:
    from hive_bridge.pruning.snapshot import TableSnapshot

    table = HudiTable.open(fixture_tables[V8_TRIPS])
    schema = {f.name: "double" if pa.types.is_floating(f.type) else "string" for f in table.arrow_schema()}
    filt = sarg.read_filter(text, schema)
    result = TableSnapshot.of(table, ColumnStatsIndex(table, persist=False)).plan(filt)
    assert result.files_kept == kept and len(result.slices) == kept
    report = result.float_proofs
    assert report is not None and report.log_reads == 1 and report.holding_nan == report.unreadable == 0
    ok = block_filter(table)
    for sl in table.latest_file_slices():
        rows = merge_slice(table, ok, sl, table.properties.precombine_field).table
        fares = [] if rows is None else rows.column("fare").to_pylist()
        if any(row_truth(filt, {"fare": KINDS["f"]}, {"fare": v}, mode).value[0] for v in fares
               for mode in modes("UTC")):
            assert (sl.partition_path, sl.file_id) in _ids(result.slices)


def test_explain_shows_the_log_proofs(fixture_copy: Any, tmp_path: Path) -> None:
    root = fixture_copy(V8_TRIPS)
    env = {**os.environ, "HIVE_BRIDGE_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    run = [sys.executable, "-m", "hive_bridge", "explain", "--table", str(root), "fare > 90"]
    doc = json.loads(subprocess.run([*run, "--json"], env=env, check=True, capture_output=True, text=True).stdout)
    assert doc["files_kept"] == 1 and doc["float_proofs"]["log_reads"] == 1 and doc["float_proofs"]["reads"] == 4
    merged = [f for f in doc["files"] if any(src.startswith("float facts read from log file .")
                                             for src in f["sources"])]
    assert len(merged) == 1 and not merged[0]["kept"]
    assert "float facts read from the base file (fare)" in merged[0]["sources"]
    text = " ".join(subprocess.run(run, env=env, check=True, capture_output=True, text=True).stdout.split())
    assert "3 proven free of NaN" in text and "4 remembered" in text
